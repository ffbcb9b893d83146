package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

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

// availableMemory reads MemAvailable (or MemTotal) from /proc/meminfo, in
// bytes.
func availableMemory() (uint64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var total uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, rest, _ := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch key {
		case "MemAvailable":
			return kb << 10, true
		case "MemTotal":
			total = kb << 10
		}
	}
	return total, total > 0
}
