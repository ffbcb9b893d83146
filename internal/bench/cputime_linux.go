package bench

import "syscall"

// ThreadCPU returns the CPU time (user+system, ns) the calling OS thread
// has used, and whether it is known. The bodies lock their goroutine to
// its thread, so on a shared machine this counts only the time the
// benchmark really ran, not the time it waited for a core.
func ThreadCPU() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}

// processCPU returns the CPU time (user+system, ns) of the whole process,
// every thread (the garbage collector's included), and whether it is known.
func processCPU() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
