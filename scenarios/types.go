package scenarios

import (
	"fmt"
	"strconv"
	"strings"

	"popsim/clock"
	"popsim/workload"
)

// Field types with a text form of their own. Each keeps the text as
// written (for reports and sweep labels) next to the parsed value.

// Duration is a Go duration with microsecond resolution: 250ms, 30s, 2m.
type Duration clock.Duration

func (d *Duration) setText(s string) error {
	v, err := clock.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("%q: want a duration of zero or more", s)
	}
	*d = Duration(v)
	return nil
}

// D returns the duration in clock units.
func (d Duration) D() clock.Duration { return clock.Duration(d) }

// Millis returns the duration in whole milliseconds (RocketMQ's unit).
func (d Duration) Millis() int64 { return clock.Duration(d).Millis() }

func (d Duration) String() string { return fmtDuration(clock.Duration(d)) }

// fmtDuration renders d in the largest unit dividing it: 5ms, 90s, 2m.
func fmtDuration(d clock.Duration) string {
	if d == 0 {
		return "0s"
	}
	units := []struct {
		d    clock.Duration
		name string
	}{{clock.Hour, "h"}, {clock.Minute, "m"}, {clock.Second, "s"}, {clock.Millisecond, "ms"}, {clock.Microsecond, "us"}}
	for _, u := range units {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	return d.String()
}

// unbalanced adds a hint to a parse error when the text's parentheses do
// not balance: YAML splits {flow: mappings} and [flow lists] at commas,
// which is the usual cause.
func unbalanced(s string, err error) error {
	if strings.Count(s, "(") != strings.Count(s, ")") {
		return fmt.Errorf("%v (inside {...} or [...] put values with commas in quotes)", err)
	}
	return err
}

// Arrivals is an arrival process in workload's text form, e.g.
// poisson(1000/s). It is kept as text because a parsed process is a
// stateful iterator: New returns a fresh one for each run.
type Arrivals struct{ text string }

func (a *Arrivals) setText(s string) error {
	p, err := workload.ParseArrivals(s)
	if err != nil {
		return unbalanced(s, err)
	}
	a.text = p.String()
	return nil
}

// New returns a fresh arrival process.
func (a Arrivals) New() (workload.Arrivals, error) { return workload.ParseArrivals(a.text) }

func (a Arrivals) String() string { return a.text }

// parsed is a workload value with its canonical text (the value's String),
// the shape Dist, Outcomes and Tags share.
type parsed[T fmt.Stringer] struct {
	text string
	v    T
}

// set parses s into p; a parse error gets unbalanced's bracket hint.
func (p *parsed[T]) set(s string, parse func(string) (T, error)) error {
	v, err := parse(s)
	if err != nil {
		return unbalanced(s, err)
	}
	p.text, p.v = v.String(), v
	return nil
}

// Dist is a processing-time (or latency) distribution in workload's text
// form, e.g. exp(10ms).
type Dist struct{ parsed[workload.Dist] }

func (d *Dist) setText(s string) error { return d.set(s, workload.ParseDist) }

// Value returns the parsed distribution (nil when unset).
func (d Dist) Value() workload.Dist { return d.v }

func (d Dist) String() string { return d.text }

// Outcomes are the listener's outcome probabilities, e.g.
// outcomes(reconsume_later=0.01,exception=0.001).
type Outcomes struct{ parsed[workload.Outcomes] }

func (o *Outcomes) setText(s string) error { return o.set(s, workload.ParseOutcomes) }

// Value returns the parsed outcomes (all Success when unset).
func (o Outcomes) Value() workload.Outcomes { return o.v }

func (o Outcomes) String() string {
	if o.text == "" {
		return workload.Outcomes{}.String()
	}
	return o.text
}

// Tags is a weighted tag list, e.g. tags(TagA:3,TagB:1).
type Tags struct{ parsed[workload.Tags] }

func (t *Tags) setText(s string) error { return t.set(s, workload.ParseTags) }

// Value returns the parsed tags (no tags when unset).
func (t Tags) Value() workload.Tags { return t.v }

func (t Tags) String() string { return t.text }

// PPM is a probability written as a decimal (0.001) or a percentage
// (0.1%), held in parts per million.
type PPM int64

func (p *PPM) setText(s string) error {
	v, err := parsePPM(s)
	if err != nil {
		return err
	}
	*p = PPM(v)
	return nil
}

func (p PPM) String() string {
	return strconv.FormatFloat(float64(p)/1e6, 'f', -1, 64)
}

// parsePPM accepts 0..1 with up to six decimals, or 0%..100% with up to
// four.
func parsePPM(s string) (int64, error) {
	want := fmt.Errorf("%q: want a probability from 0 to 1 (at most 6 decimals, e.g. 0.001) or a percentage (0.1%%)", s)
	num, scale := s, int64(1_000_000)
	if strings.HasSuffix(s, "%") {
		num, scale = strings.TrimSuffix(s, "%"), 10_000
	}
	whole, frac, _ := strings.Cut(num, ".")
	if whole == "" || len(whole) > 3 || !digits(whole) || !digits(frac) || len(frac) > 6 {
		return 0, want
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac, 10, 64)
	}
	den := int64(1)
	for range len(frac) {
		den *= 10
	}
	if (f*scale)%den != 0 {
		return 0, want
	}
	v := w*scale + f*scale/den
	if v > 1_000_000 {
		return 0, fmt.Errorf("%q out of range: want 0..1 (0%%..100%%)", s)
	}
	return v, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Seeds is a list of seeds: "7", "1..20", "1,2,5", "1..4,9".
type Seeds struct {
	text string
	list []uint64
}

// maxSeeds bounds a seed list.
const maxSeeds = 1_000_000

func (s *Seeds) setText(t string) error {
	l, err := ParseSeeds(t)
	if err != nil {
		return err
	}
	s.text, s.list = t, l
	return nil
}

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
