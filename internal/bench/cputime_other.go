//go:build !linux

package bench

// threadCPU is only known on Linux.
func threadCPU() (int64, bool) { return 0, false }

// processCPU is only known on Linux.
func processCPU() (int64, bool) { return 0, false }
