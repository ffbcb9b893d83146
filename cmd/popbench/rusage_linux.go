package main

import "syscall"

// processUsage is the process's CPU time (user+system, seconds) and peak
// resident set (bytes), and whether they are known.
func processUsage() (cpu float64, maxRSS uint64, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, false
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9, uint64(ru.Maxrss) * 1024, true // Maxrss is in KiB
}
