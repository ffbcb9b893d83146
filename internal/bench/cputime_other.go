//go:build !linux

package bench

// ThreadCPU is only known on Linux.
func ThreadCPU() (int64, bool) { return 0, false }

// processCPU is only known on Linux.
func processCPU() (int64, bool) { return 0, false }
