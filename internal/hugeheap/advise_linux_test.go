package hugeheap

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestAdviseFreshReusedByHeap checks the two facts Setup relies on: the
// marked range is one the kernel flags for huge pages ("hg" in smaps'
// VmFlags), and the heap's later allocations land in advised memory.
func TestAdviseFreshReusedByHeap(t *testing.T) {
	raw, err := os.ReadFile(thpEnabled)
	if err != nil {
		t.Skipf("no %s: %v", thpEnabled, err)
	}
	if mode, _ := parseMode(string(raw)); mode != "madvise" {
		t.Skipf("THP mode %q: the kernel takes no advice to check", mode)
	}
	if over, _ := os.ReadFile(overcommitter); strings.TrimSpace(string(over)) == "2" {
		t.Skip("strict overcommit: a 256 MiB heap allocation could run the test out of memory")
	}
	lo, hi, err := adviseFresh(256 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if hi-lo < 254<<20 || lo%hugePage != 0 || hi%hugePage != 0 {
		t.Fatalf("advised [%#x, %#x): want 2 MiB aligned and nearly 256 MiB", lo, hi)
	}
	flags, err := vmFlags(lo)
	if err != nil {
		t.Fatal(err)
	}
	if !hasHg(flags) {
		t.Errorf("VmFlags of the range at %#x are %q: want hg (MADV_HUGEPAGE)", lo, flags)
	}
	bufs := make([][]byte, 32)
	for i := range bufs {
		bufs[i] = make([]byte, 1<<20)
	}
	in := 0
	for _, b := range bufs {
		if flags, err := vmFlags(uintptr(unsafe.Pointer(&b[0]))); err == nil && hasHg(flags) {
			in++
		}
	}
	runtime.KeepAlive(bufs)
	if in < len(bufs)/2 {
		t.Errorf("%d of %d fresh 1 MiB buffers are in memory advised for huge pages: the heap does not reuse the range", in, len(bufs))
	}
}

func hasHg(flags string) bool { return strings.Contains(" "+flags+" ", " hg ") }

// vmFlags returns the VmFlags line of the mapping holding addr, from
// /proc/self/smaps.
func vmFlags(addr uintptr) (string, error) {
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	inside := false
	for _, line := range strings.Split(string(raw), "\n") {
		if start, end, ok := mappingRange(line); ok {
			inside = start <= addr && addr < end
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && inside {
			return strings.TrimSpace(rest), nil
		}
	}
	return "", os.ErrNotExist
}

// mappingRange parses the "start-end" that opens an smaps mapping line.
func mappingRange(line string) (start, end uintptr, ok bool) {
	f, _, _ := strings.Cut(line, " ")
	a, b, found := strings.Cut(f, "-")
	if !found {
		return 0, 0, false
	}
	s, err1 := strconv.ParseUint(a, 16, 64)
	e, err2 := strconv.ParseUint(b, 16, 64)
	return uintptr(s), uintptr(e), err1 == nil && err2 == nil
}
