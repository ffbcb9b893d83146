// Package hugeheap asks Linux to back the Go heap of a popsim or popbench
// process with transparent huge pages (2 MiB), as the JVM's
// -XX:+UseTransparentHugePages does for its heap.
//
// Why: a simulator run's state is a few large tables indexed at random
// (the checkpoint path's merge-key table, revive rounds, timer wheel, the
// message log). With 4 KiB pages, a fresh process pays a page fault for
// every 4 KiB it first touches (about 19 000 for sim.DefaultConfig, a fifth
// of its CPU time in the kernel) and a TLB miss for most random accesses.
// With 2 MiB pages it pays about 1 000 faults and far fewer TLB misses.
//
// How: most distributions set /sys/kernel/mm/transparent_hugepage/enabled
// to "madvise", which gives huge pages only to memory a process has marked
// with madvise(MADV_HUGEPAGE), and the Go runtime marks none of its heap.
// Setup therefore grows the heap once by one large allocation (fresh
// address space, never touched, so it costs no memory), marks its 2 MiB
// aligned interior, frees it and returns it to the OS. The heap's later
// allocations reuse that address range first (the runtime's page
// allocator takes the lowest free address), and the kernel backs each
// 2 MiB of it with a huge page when it is first touched. Under "always"
// nothing needs doing; under "never" nothing can be done.
//
// The advice changes how memory is backed, never what a run computes:
// traces and results are the same with and without it. The environment
// variable POPSIM_HUGEPAGES=off turns it off. Setup never marks more than
// half the machine's memory, and skips the request under strict overcommit
// (vm.overcommit_memory=2), where the large allocation would count against
// the commit limit.
//
// This package is for the commands' main functions only: the engine and
// simulator packages never call it.
package hugeheap
