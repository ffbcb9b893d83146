//go:build !linux

package bench

// threadCPU is only known on Linux.
func threadCPU() (int64, bool) { return 0, false }
