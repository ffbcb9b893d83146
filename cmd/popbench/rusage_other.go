//go:build !linux

package main

// processUsage is only known on Linux.
func processUsage() (cpu float64, maxRSS uint64, ok bool) { return 0, 0, false }
