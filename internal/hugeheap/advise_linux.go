package hugeheap

import (
	"os"
	"runtime/debug"
	"syscall"
	"unsafe"
)

const (
	thpEnabled    = "/sys/kernel/mm/transparent_hugepage/enabled"
	overcommitter = "/proc/sys/vm/overcommit_memory"
	madvHugePage  = 14 // MADV_HUGEPAGE, which package syscall does not name
)

// setup reads the kernel's settings and, under "madvise", marks want
// bytes of fresh heap address space, at most half of total.
func setup(want int64, total uint64) Status {
	raw, err := os.ReadFile(thpEnabled)
	if err != nil {
		return Status{Note: "no transparent huge pages in this kernel"}
	}
	mode, err := parseMode(string(raw))
	if err != nil {
		return Status{Note: thpEnabled + ": " + err.Error()}
	}
	over, _ := os.ReadFile(overcommitter) // absent: the kernel's default, 0
	n, why := plan(mode, string(over), int64(min(total, 1<<62)), want)
	if n == 0 {
		return Status{Mode: mode, Note: why}
	}
	lo, hi, err := adviseFresh(int(n))
	if err != nil {
		return Status{Mode: mode, Note: "madvise: " + err.Error()}
	}
	return Status{Mode: mode, Advised: int64(hi - lo)}
}

// adviseFresh grows the heap by one n-byte allocation, marks its 2 MiB
// aligned interior for huge pages, and frees it back to the OS. It
// returns the marked range. The allocation is fresh address space, which
// the runtime knows to be zero, so nothing is touched or resident.
func adviseFresh(n int) (lo, hi uintptr, err error) {
	b := make([]byte, n)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo = (start + hugePage - 1) &^ (hugePage - 1)
	hi = (start + uintptr(n)) &^ (hugePage - 1)
	err = syscall.Madvise(b[lo-start:hi-start], madvHugePage)
	// b is dead from here: a collection frees it, and its pages go back
	// to the OS untouched.
	debug.FreeOSMemory()
	if err != nil {
		return 0, 0, err
	}
	return lo, hi, nil
}
