package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"popsim/scenarios"
)

// source is the scenario a command works on: a built-in name or a file,
// plus -set overrides. Flags: -scenario, -f, -set.
type source struct {
	name  string
	file  string
	sets  []scenarios.Override
	force bool // run even when the estimate is over the machine's memory
}

func (s *source) register(fs *flag.FlagSet) {
	fs.StringVar(&s.name, "scenario", "", "built-in scenario `NAME` (popsim list); default: default")
	fs.StringVar(&s.file, "f", "", "scenario `FILE` (YAML) instead of a built-in")
	fs.Func("set", "override one scenario key, `key=value` (repeatable), e.g. -set consumers[0].count=100 -set engine.bugs.commitOffsetLag=true", func(v string) error {
		o, err := scenarios.ParseOverride(v)
		if err != nil {
			return err
		}
		s.sets = append(s.sets, o)
		return nil
	})
	fs.BoolVar(&s.force, "force", false, "run even when the run's estimated memory is over this machine's bound")
}

// load loads the scenario with the -set overrides and any extra ones.
func (s *source) load(extra ...scenarios.Override) (*scenarios.Scenario, error) {
	if s.name != "" && s.file != "" {
		return nil, fmt.Errorf("-scenario %s and -f %s: give one or the other", s.name, s.file)
	}
	all := append(append([]scenarios.Override(nil), s.sets...), extra...)
	if s.file != "" {
		return scenarios.LoadFile(s.file, all...)
	}
	name := s.name
	if name == "" {
		name = "default"
	}
	return scenarios.Builtin(name, all...)
}

// args returns the flags that select this scenario, for replay commands.
func (s *source) args(extra ...scenarios.Override) []string {
	var a []string
	if s.file != "" {
		a = append(a, "-f", s.file)
	} else {
		name := s.name
		if name == "" {
			name = "default"
		}
		a = append(a, "-scenario", name)
	}
	for _, o := range append(append([]scenarios.Override(nil), s.sets...), extra...) {
		a = append(a, "-set", o.String())
	}
	return a
}

// replayCommand is the command that replays one seed.
func replayCommand(src *source, seed uint64, extra ...scenarios.Override) string {
	args := append([]string{"go", "run", "./cmd/popsim", "replay"}, src.args(extra...)...)
	args = append(args, "-seed", strconv.FormatUint(seed, 10))
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " ")
}

// shellQuote quotes a word for POSIX shells when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
