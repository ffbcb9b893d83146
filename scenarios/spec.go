package scenarios

import (
	"fmt"
	"strconv"
	"strings"

	"popsim/sim"
)

// Spec is a decoded scenario file: a name and description, the seeds of
// sweeps, and the simulator's configuration, whose fields are the file's
// other keys (sim.Config's Go names in lower camel case). A key left out
// takes the simulator's default, documented in doc.go.
type Spec struct {
	Name        string // [a-z0-9-], the folder name of its runs
	Description string // its first line is what `popsim list` prints
	Seeds       Seeds  // the seeds of sweeps, plans and tests: 1..20 (default: seed)

	// Config is the simulation. Its Seed is the seed of `popsim run`
	// without -seed (default 1).
	sim.Config `yaml:",inline"`
}

// defaultSpec is the Spec before a file is decoded over it.
func defaultSpec() Spec {
	return Spec{Config: sim.Config{Seed: 1}}
}

// Config returns the simulator configuration of the scenario for seed.
// Zero fields keep the simulator's defaults.
func (s *Scenario) Config(seed uint64) sim.Config {
	c := s.Spec.Config
	c.Seed = seed
	return c
}

// Seeds is a list of seeds: "7", "1..20", "1,2,5", "1..4,9".
type Seeds struct {
	text string
	list []uint64
}

// maxSeeds bounds a seed list.
const maxSeeds = 1_000_000

// UnmarshalText implements encoding.TextUnmarshaler with ParseSeeds.
func (s *Seeds) UnmarshalText(b []byte) error {
	l, err := ParseSeeds(string(b))
	if err != nil {
		return err
	}
	s.text, s.list = string(b), l
	return nil
}

// MarshalText implements encoding.TextMarshaler: the list as written.
func (s Seeds) MarshalText() ([]byte, error) { return []byte(s.text), nil }

// List returns the seeds in the order written.
func (s Seeds) List() []uint64 { return s.list }

func (s Seeds) String() string { return s.text }

// ParseSeeds parses a seed list: comma-separated seeds and inclusive
// ranges a..b, at most a million seeds, none repeated.
func ParseSeeds(t string) ([]uint64, error) {
	var out []uint64
	seen := map[uint64]bool{}
	for _, part := range strings.Split(t, ",") {
		part = strings.TrimSpace(part)
		a, b, isRange := strings.Cut(part, "..")
		lo, err1 := strconv.ParseUint(a, 10, 64)
		hi, err2 := lo, error(nil)
		if isRange {
			hi, err2 = strconv.ParseUint(b, 10, 64)
		}
		if err1 != nil || err2 != nil || hi < lo {
			return nil, fmt.Errorf("seeds %q: %q: want N, N..M (M >= N) or a comma-separated list of them, e.g. 1..20", t, part)
		}
		if hi-lo >= maxSeeds || len(out)+int(hi-lo+1) > maxSeeds {
			return nil, fmt.Errorf("seeds %q: more than %d seeds", t, maxSeeds)
		}
		for s := lo; ; s++ {
			if seen[s] {
				return nil, fmt.Errorf("seeds %q: seed %d given twice", t, s)
			}
			seen[s] = true
			out = append(out, s)
			if s == hi {
				break
			}
		}
	}
	return out, nil
}
