package main

import (
	"flag"
	"fmt"
	"strconv"

	"popsim/scenarios"
	"popsim/sweep"
)

// registerSource adds the flags that select a scenario: -scenario, -f, -set;
// the returned flag is -force (run even over the memory estimate's bound).
func registerSource(fs *flag.FlagSet, s *sweep.Source) *bool {
	fs.StringVar(&s.Name, "scenario", "", "built-in scenario `NAME` (popsim list); default: default")
	fs.StringVar(&s.File, "f", "", "scenario `FILE` (YAML) instead of a built-in")
	fs.Func("set", "override one scenario key, `key=value` (repeatable), e.g. -set consumers[0].count=100 -set engine.bugs.commitOffsetLag=true", func(v string) error {
		o, err := scenarios.ParseOverride(v)
		if err != nil {
			return err
		}
		s.Sets = append(s.Sets, o)
		return nil
	})
	return fs.Bool("force", false, "run even when the run's estimated memory is over this machine's bound")
}

// seedFlag is a uint64 flag that remembers whether it was set.
type seedFlag struct {
	v   uint64
	set bool
}

func (f *seedFlag) String() string { return strconv.FormatUint(f.v, 10) }
func (f *seedFlag) Set(s string) error {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("want a whole number from 0 to 18446744073709551615")
	}
	f.v, f.set = v, true
	return nil
}
