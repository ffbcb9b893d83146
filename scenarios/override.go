package scenarios

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"popsim/sim"
)

// Override sets one field of a scenario before it is decoded, as
// `-set key=value` does: consumers[0].count=100, engine.bugs.commitOffsetLag=true,
// duration=5s. A path segment [*] applies to every element of a list
// (consumers[*].invisibleTime=10s). Overrides are applied to the document
// tree, so an overridden value is checked exactly like one written in the
// file, and errors say "(-set)" instead of a line number.
type Override struct {
	Path  string
	Value string
}

func (o Override) String() string { return o.Path + "=" + o.Value }

// ParseOverride parses "key=value".
func ParseOverride(s string) (Override, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return Override{}, fmt.Errorf("-set %q: want key=value, e.g. consumers[0].count=100 or engine.enablePopBufferMerge=true", s)
	}
	if _, err := splitPath(k); err != nil {
		return Override{}, fmt.Errorf("-set %q: %v", s, err)
	}
	return Override{Path: k, Value: strings.TrimSpace(v)}, nil
}

// segment is one step of an override path: a key, or a list index
// (-1 for [*]).
type segment struct {
	key   string
	index int
	isIdx bool
}

// maxPathSegments bounds an override path.
const maxPathSegments = 32

func splitPath(p string) ([]segment, error) {
	var segs []segment
	for _, part := range strings.Split(p, ".") {
		name, rest, bracket := strings.Cut(part, "[")
		if name == "" {
			return nil, fmt.Errorf("path %q: want a field name before every [ and after every dot", p)
		}
		segs = append(segs, segment{key: name})
		for bracket {
			idx, after, ok := strings.Cut(rest, "]")
			if !ok {
				return nil, fmt.Errorf("path %q: unclosed [", p)
			}
			seg := segment{index: -1, isIdx: true}
			if idx != "*" {
				n, err := strconv.Atoi(idx)
				if err != nil || n < 0 || n >= maxListLen {
					return nil, fmt.Errorf("path %q: index %q: want 0..%d or *", p, idx, maxListLen-1)
				}
				seg.index = n
			}
			segs = append(segs, seg)
			rest, bracket = strings.CutPrefix(after, "[")
			if !bracket && after != "" {
				return nil, fmt.Errorf("path %q: unexpected %q after ]", p, after)
			}
		}
		if len(segs) > maxPathSegments {
			return nil, fmt.Errorf("path %q: more than %d segments", p, maxPathSegments)
		}
	}
	return segs, nil
}

// apply sets the override in the document's root mapping, creating
// missing mapping keys; list elements must exist.
func (o Override) apply(root *yaml.Node) error {
	segs, err := splitPath(o.Path)
	if err != nil {
		return err
	}
	val, err := overrideValue(o.Value)
	if err != nil {
		return fmt.Errorf("-set %s: %v", o, err)
	}
	n, err := setPath(root, segs, "", val)
	if err != nil {
		return fmt.Errorf("-set %s: %v", o, err)
	}
	if n == 0 {
		return fmt.Errorf("-set %s: the list is empty, nothing to set", o)
	}
	return nil
}

// overrideValue parses the value as YAML (so lists and mappings work) and
// marks every node as coming from an override.
func overrideValue(s string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return nil, fmt.Errorf("value: %v", err)
	}
	var v *yaml.Node
	if len(doc.Content) == 0 {
		v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	} else {
		v = doc.Content[0]
	}
	markOverride(v, 0)
	return v, nil
}

func markOverride(n *yaml.Node, depth int) {
	if n == nil || depth > 64 {
		return
	}
	n.Line, n.Column = overrideLine, 0
	for _, c := range n.Content {
		markOverride(c, depth+1)
	}
}

// setPath sets segs under n to val and returns how many places were set.
func setPath(n *yaml.Node, segs []segment, at string, val *yaml.Node) (int, error) {
	n = resolve(n)
	if len(segs) == 0 {
		panic("scenarios: setPath with an empty path")
	}
	s := segs[0]
	if s.isIdx {
		return setIndex(n, segs, at, val)
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return 0, fmt.Errorf("%s is not a mapping: cannot set %q in it", orDoc(at), s.key)
	}
	if key, used := dottedKey(n, segs); used > 1 {
		s.key, segs = key, append([]segment{{key: key}}, segs[used:]...)
	}
	sub := join(at, s.key)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == s.key {
			if len(segs) == 1 {
				n.Content[i+1] = val
				return 1, nil
			}
			return setPath(n.Content[i+1], segs[1:], sub, val)
		}
	}
	if len(segs) > 1 && segs[1].isIdx {
		return 0, fmt.Errorf("%s has no list %q", orDoc(at), s.key)
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.key, Line: overrideLine}
	child := val
	if len(segs) > 1 {
		child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: overrideLine}
	}
	n.Content = append(n.Content, key, child)
	if len(segs) == 1 {
		return 1, nil
	}
	return setPath(child, segs[1:], sub, val)
}

// dottedKey: a key may contain dots (Kafka's config keys,
// group.share.record.lock.duration.ms). At mapping n, the longest run of
// plain segments that spells a key n has, or a dotted key some engine or
// consumer kind has, is that one key; it returns the key and how many
// segments it takes (1: none joined).
func dottedKey(n *yaml.Node, segs []segment) (string, int) {
	for k := len(segs); k >= 2; k-- {
		parts := make([]string, 0, k)
		for _, s := range segs[:k] {
			if s.isIdx {
				break
			}
			parts = append(parts, s.key)
		}
		if len(parts) < k {
			continue
		}
		key := strings.Join(parts, ".")
		if dottedKeys()[key] {
			return key, k
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if resolve(n.Content[i]).Value == key {
				return key, k
			}
		}
	}
	return segs[0].key, 1
}

// dottedKeys are the settings keys with dots of every engine and consumer
// kind.
var dottedKeys = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, t := range []reflect.Type{reflect.TypeFor[sim.EngineSpec](), reflect.TypeFor[sim.ConsumerSpec]()} {
		for _, keys := range sim.SettingsKeys(t) {
			for _, k := range keys {
				if strings.Contains(k, ".") {
					out[k] = true
				}
			}
		}
	}
	return out
})

func setIndex(n *yaml.Node, segs []segment, at string, val *yaml.Node) (int, error) {
	s := segs[0]
	if n == nil || n.Kind != yaml.SequenceNode {
		return 0, fmt.Errorf("%s is not a list", orDoc(at))
	}
	lo, hi := s.index, s.index+1
	if s.index < 0 {
		lo, hi = 0, len(n.Content)
	} else if s.index >= len(n.Content) {
		return 0, fmt.Errorf("%s has %d entries: index %d out of range", at, len(n.Content), s.index)
	}
	total := 0
	for i := lo; i < hi; i++ {
		sub := fmt.Sprintf("%s[%d]", at, i)
		if len(segs) == 1 {
			n.Content[i] = val
			total++
			continue
		}
		k, err := setPath(n.Content[i], segs[1:], sub, val)
		if err != nil {
			return 0, err
		}
		total += k
	}
	return total, nil
}

func orDoc(at string) string {
	if at == "" {
		return "the document"
	}
	return at
}
