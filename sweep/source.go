package sweep

import (
	"fmt"
	"strconv"
	"strings"

	"popsim/scenarios"
)

// DefaultScenario is the built-in scenario used when a Source names none.
const DefaultScenario = "default"

// Source is the scenario a run, sweep or plan works on: a built-in name or
// a file, plus -set overrides.
type Source struct {
	Name string // built-in scenario; "" means DefaultScenario unless File is set
	File string // scenario file (YAML) instead of a built-in
	Sets []scenarios.Override
}

// Load loads the scenario with the Source's overrides and then extra ones.
func (s *Source) Load(extra ...scenarios.Override) (*scenarios.Scenario, error) {
	if s.Name != "" && s.File != "" {
		return nil, fmt.Errorf("-scenario %s and -f %s: give one or the other", s.Name, s.File)
	}
	all := append(append([]scenarios.Override(nil), s.Sets...), extra...)
	if s.File != "" {
		return scenarios.LoadFile(s.File, all...)
	}
	return scenarios.Builtin(s.name(), all...)
}

func (s *Source) name() string {
	if s.Name == "" {
		return DefaultScenario
	}
	return s.Name
}

// Args returns the command-line flags that select this scenario with its
// overrides and then extra ones, for replay commands and manifests.
func (s *Source) Args(extra ...scenarios.Override) []string {
	var a []string
	if s.File != "" {
		a = append(a, "-f", s.File)
	} else {
		a = append(a, "-scenario", s.name())
	}
	for _, o := range append(append([]scenarios.Override(nil), s.Sets...), extra...) {
		a = append(a, "-set", o.String())
	}
	return a
}

// ReplayCommand is the shell command that replays one seed of this
// scenario with extra overrides (a sweep's parameter point).
func (s *Source) ReplayCommand(seed uint64, extra ...scenarios.Override) string {
	args := append([]string{"go", "run", "./cmd/popsim", "replay"}, s.Args(extra...)...)
	args = append(args, "-seed", strconv.FormatUint(seed, 10))
	for i, a := range args {
		args[i] = ShellQuote(a)
	}
	return strings.Join(args, " ")
}

// ShellQuote quotes a word for POSIX shells when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// SeedsOf is the seed list text parsed (e.g. "1..20" or "1,5,9"), or the
// scenario's own seeds when list is "".
func SeedsOf(s *scenarios.Scenario, list string) ([]uint64, error) {
	if list == "" {
		return s.Seeds.List(), nil
	}
	seeds, err := scenarios.ParseSeeds(list)
	if err != nil {
		return nil, fmt.Errorf("-seeds: %v", err)
	}
	return seeds, nil
}
