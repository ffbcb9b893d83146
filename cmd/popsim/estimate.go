package main

import (
	"fmt"

	"popsim/internal/meminfo"
	"popsim/scenarios"
	"popsim/sim"
)

// memoryShare is the part of the machine's available memory that the
// runs of one command may take together.
const memoryShare = 0.8

// checkEstimate refuses a run of s whose estimated memory is above this
// machine's bound for one of `concurrent` runs at a time, unless force is
// set; the error prints the estimate and the bound. Where the machine's
// memory cannot be read there is no bound.
func checkEstimate(s *scenarios.Scenario, concurrent int, force bool) error {
	cfg := s.Config(s.Seed)
	est, err := cfg.Estimate()
	if err != nil {
		return err
	}
	avail, ok := availableMemory()
	if !ok || force {
		return nil
	}
	bound := memoryShare * float64(avail) / float64(max(concurrent, 1))
	if est.Bytes <= bound {
		return nil
	}
	return fmt.Errorf("%s: refusing to run: estimated %s, over this machine's bound of %s per run "+
		"(%.0f%% of the %s available, %d run(s) at a time); shorten duration, lower the rates or backlogs, "+
		"run fewer at a time (-parallel), or pass -force to run anyway",
		s.Name, est, sim.Bytes(bound), memoryShare*100, sim.Bytes(float64(avail)), max(concurrent, 1))
}

// availableMemory is the memory a new run may take (MemAvailable, or
// MemTotal on a kernel without it), in bytes; false where it cannot be
// read.
func availableMemory() (uint64, bool) {
	i, err := meminfo.Read()
	return i.Free(), err == nil
}
