//go:build !linux

package hugeheap

func setup(int64, uint64) Status {
	return Status{Note: "huge pages are requested on Linux only"}
}
