package workload

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"popsim/model"
	"popsim/workload/pcg"
)

// PropertySet is one set of user properties a producer may put on a
// message, and its relative weight.
type PropertySet struct {
	Weight int64
	Props  []model.Property
}

// Properties picks the user properties of each message from a weighted
// list of sets (a SQL92 subscription filters on them). The zero value
// picks none and draws nothing.
type Properties struct {
	sets  []PropertySet // each set sorted by key
	total int64
}

// Bounds on Properties.
const (
	maxPropertySets   = 1024
	maxPropertiesEach = 32
	maxPropertyName   = 64
	maxPropertyValue  = 128
)

// NewProperties returns a weighted list of 1 to 1024 property sets, each
// of 0 to 32 properties with distinct names. A name is 1 to 64 characters
// of a SQL92 identifier ([A-Za-z_$][A-Za-z0-9_$]*, so that a subscription
// can name it) and not one of RocketMQ's own properties; a value is 1 to
// 128 characters from [A-Za-z0-9_.-] (RocketMQ refuses a blank one, and a
// property whose value is empty is absent); weights are 1 to 1e9.
func NewProperties(sets ...PropertySet) (Properties, error) {
	if len(sets) < 1 || len(sets) > maxPropertySets {
		return Properties{}, fmt.Errorf("workload: properties has %d sets: want 1 to %d", len(sets), maxPropertySets)
	}
	out := Properties{sets: make([]PropertySet, len(sets))}
	for i, s := range sets {
		if s.Weight < 1 || s.Weight > maxTagWeight {
			return Properties{}, fmt.Errorf("workload: properties set %d weight %d out of range: want 1 to %d", i+1, s.Weight, maxTagWeight)
		}
		if len(s.Props) > maxPropertiesEach {
			return Properties{}, fmt.Errorf("workload: properties set %d has %d properties: want at most %d", i+1, len(s.Props), maxPropertiesEach)
		}
		ps := slices.Clone(s.Props)
		slices.SortFunc(ps, func(a, b model.Property) int { return strings.Compare(a.Key, b.Key) })
		for j, p := range ps {
			if err := checkProperty(p); err != nil {
				return Properties{}, fmt.Errorf("workload: properties set %d: %w", i+1, err)
			}
			if j > 0 && ps[j-1].Key == p.Key {
				return Properties{}, fmt.Errorf("workload: properties set %d names %s twice: want each property once", i+1, quote(p.Key))
			}
		}
		out.sets[i] = PropertySet{Weight: s.Weight, Props: ps}
		out.total += s.Weight
	}
	return out, nil
}

func checkProperty(p model.Property) error {
	if len(p.Key) < 1 || len(p.Key) > maxPropertyName || !identifier(p.Key) {
		return fmt.Errorf("property name %s invalid: want 1 to %d characters of a SQL92 identifier, [A-Za-z_$][A-Za-z0-9_$]*", quote(p.Key), maxPropertyName)
	}
	if model.IsSystemProperty(p.Key) {
		return fmt.Errorf("property name %s is used by RocketMQ itself: want a user property", p.Key)
	}
	if len(p.Value) < 1 || len(p.Value) > maxPropertyValue || !tagChars(p.Value) {
		return fmt.Errorf("property %s value %s invalid: want 1 to %d characters from [A-Za-z0-9_.-]", p.Key, quote(p.Value), maxPropertyValue)
	}
	return nil
}

// identifier: a SQL92 property name (RocketMQ's selector grammar).
func identifier(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// IsZero reports whether p sets no properties (and draws nothing).
func (p Properties) IsZero() bool { return len(p.sets) == 0 }

// Pick returns a copy of a set with probability proportional to its
// weight (nil for an empty set), sorted by name as model.Message keeps
// them. It makes exactly one call on r, none for the zero value. It
// inlines: the zero value (most producers') answers without a call.
func (p Properties) Pick(r *pcg.Rand) []model.Property {
	if p.IsZero() {
		return nil
	}
	return p.pick(r)
}

// pick is Pick of a set that is not the zero value.
func (p Properties) pick(r *pcg.Rand) []model.Property {
	n := r.Int64N(p.total)
	for _, s := range p.sets {
		if n < s.Weight {
			return slices.Clone(s.Props)
		}
		n -= s.Weight
	}
	return nil
}

// Sets returns the sets (copies), in the order given; nil for the zero
// value.
func (p Properties) Sets() [][]model.Property {
	var out [][]model.Property
	for _, s := range p.sets {
		out = append(out, slices.Clone(s.Props))
	}
	return out
}

// String returns the canonical form accepted by ParseProperties:
// "properties(3:set(price=12,region=eu),1:set())", names in order within
// a set; "properties()" for the zero value.
func (p Properties) String() string {
	parts := make([]string, len(p.sets))
	for i, s := range p.sets {
		kv := make([]string, len(s.Props))
		for j, x := range s.Props {
			kv[j] = x.Key + "=" + x.Value
		}
		parts[i] = strconv.FormatInt(s.Weight, 10) + ":set(" + strings.Join(kv, ",") + ")"
	}
	return "properties(" + strings.Join(parts, ",") + ")"
}

// ParseProperties parses "properties(weight:set(name=value,...),...)"; a
// set without a weight weighs 1, and "properties()" is the zero value.
func ParseProperties(s string) (Properties, error) {
	n, err := parseCall("properties", s)
	if err != nil {
		return Properties{}, err
	}
	if n.name != "properties" {
		return Properties{}, fmt.Errorf("workload: properties kind %q unknown: want properties(weight:set(name=value,...),...)", n.name)
	}
	if len(n.args) == 0 {
		return Properties{}, nil
	}
	sets := make([]PropertySet, len(n.args))
	for i, a := range n.args {
		w := int64(1)
		if a.key != "" {
			if a.sep != ':' {
				return Properties{}, fmt.Errorf("workload: properties entry %d is not weight:set(...)", i+1)
			}
			v, err := strconv.ParseInt(a.key, 10, 64)
			if err != nil {
				return Properties{}, fmt.Errorf("workload: properties entry %d weight %s is not an integer", i+1, quote(a.key))
			}
			w = v
		}
		if !a.val.call || a.val.name != "set" {
			return Properties{}, fmt.Errorf("workload: properties entry %d is not set(name=value,...)", i+1)
		}
		for _, kv := range a.val.args {
			if kv.key == "" || kv.sep != '=' || kv.val.call {
				return Properties{}, fmt.Errorf("workload: properties entry %d: want set(name=value,...)", i+1)
			}
			sets[i].Props = append(sets[i].Props, model.Property{Key: kv.key, Value: kv.val.name})
		}
		sets[i].Weight = w
	}
	return NewProperties(sets...)
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseProperties.
func (p *Properties) UnmarshalText(b []byte) error {
	v, err := ParseProperties(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// MarshalText implements encoding.TextMarshaler: the canonical form.
func (p Properties) MarshalText() ([]byte, error) { return []byte(p.String()), nil }
