package scenarios

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"popsim/clock"
	"popsim/sim"
)

// The decoder walks a yaml.Node tree onto Spec (and so onto sim.Config)
// by reflection. A key is its field's name as sim.FieldKey gives it; a
// type with a text form (encoding.TextUnmarshaler: durations,
// distributions, arrival processes, probabilities...) parses its own
// scalar; a sim.Variant section (a consumer, the engine) reads its kind
// key first and takes its other keys from the settings that kind chooses.
//
// It is strict: unknown keys, keys of another kind, repeated keys and
// wrong node kinds are errors that name the file, the line, the field's
// path (consumers[0].batch) and what is allowed. Ranges are not its
// business: sim.Config.Validate checks them once, for files and code
// alike. It never panics on input: recursion follows the Go types, not
// the document, so its depth is bounded whatever the file contains.

// FieldError is an error in one field of a scenario file.
type FieldError struct {
	Source string // the file name, or builtin/<name>.yaml
	Line   int    // 1-based; 0 when unknown, overrideLine when the value came from a -set override
	Path   string // consumers[0].batch; empty for the whole document
	Msg    string
}

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	} else if e.Line == overrideLine {
		b.WriteString(" (-set)")
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is several errors of one scenario file, in the order of the
// configuration's sections; each is a *FieldError.
type ErrorList []*FieldError

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the errors, for errors.As.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// overrideLine marks nodes created by a -set override.
const overrideLine = -1

type decoder struct {
	source string
	// consumerKind is the kind of a consumer section that names none: the
	// kind of the scenario's engine (pop-push for rocketmq).
	consumerKind string
}

func (d *decoder) errorf(n *yaml.Node, path, format string, a ...any) error {
	return &FieldError{Source: d.source, Line: n.Line, Path: path, Msg: fmt.Sprintf(format, a...)}
}

// resolve follows aliases (bounded: yaml.v3 refuses alias cycles and
// excessive aliasing when it parses the document).
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	return n
}

var (
	unmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	variantType     = reflect.TypeFor[sim.Variant]()
)

// decode sets v from n. unit is the field's unit tag ("ms" for a
// RocketMQ millisecond setting).
func (d *decoder) decode(n *yaml.Node, path string, v reflect.Value, unit string) error {
	n = resolve(n)
	if n == nil || n.Kind == yaml.AliasNode {
		return &FieldError{Source: d.source, Path: path, Msg: "alias chain too long"}
	}
	if v.CanAddr() && v.Addr().Type().Implements(unmarshalerType) {
		s, err := d.scalarText(n, path)
		if err != nil {
			return err
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return d.errorf(n, path, "%v", unbalanced(s, err))
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		return d.decodeStruct(n, path, v)
	case reflect.Slice:
		return d.decodeSlice(n, path, v)
	case reflect.String:
		s, err := d.scalarText(n, path)
		v.SetString(s)
		return err
	case reflect.Bool:
		return d.decodeBool(n, path, v)
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint64:
		return d.decodeInt(n, path, v, unit)
	}
	panic(fmt.Sprintf("scenarios: field %s has unsupported type %s", path, v.Type()))
}

func (d *decoder) scalarText(n *yaml.Node, path string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", d.errorf(n, path, "want a single value, got %s", kindName(n))
	}
	if n.Tag == "!!null" {
		return "", d.errorf(n, path, "want a value, got nothing (null)")
	}
	return n.Value, nil
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

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping (key: value lines)"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	}
	return "an alias"
}

// field is one settable key of a struct being decoded.
type field struct {
	key  string
	v    reflect.Value
	unit string
}

// fieldsOf lists the keys of struct v: its own fields, those of inline
// structs, and none for inline interfaces (a Variant's settings, which
// the caller adds).
func fieldsOf(v reflect.Value) []field {
	var out []field
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		key, inline, skip := sim.FieldKey(f)
		switch {
		case skip:
		case inline:
			if f.Type.Kind() == reflect.Struct {
				out = append(out, fieldsOf(v.Field(i))...)
			}
		default:
			out = append(out, field{key: key, v: v.Field(i), unit: f.Tag.Get("unit")})
		}
	}
	return out
}

func keys(fs []field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.key
	}
	return out
}

func (d *decoder) decodeStruct(n *yaml.Node, path string, v reflect.Value) error {
	fields := fieldsOf(v)
	if n.Kind != yaml.MappingNode {
		return d.errorf(n, path, "want a mapping of %s, got %s", strings.Join(keys(fields), ", "), kindName(n))
	}
	if err := d.checkKeys(n, path); err != nil {
		return err
	}
	var variant sim.Variant
	kind, hasVersion := "", false
	if v.Addr().Type().Implements(variantType) {
		variant = v.Addr().Interface().(sim.Variant)
		var err error
		var set any
		if fields, kind, set, err = d.chooseKind(n, path, variant, fields); err != nil {
			return err
		}
		if err = d.applyVersion(n, path, set); err != nil {
			return err
		}
		_, hasVersion = set.(versioned)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolve(n.Content[i]), n.Content[i+1]
		sub := join(path, k.Value)
		if variant != nil && k.Value == "kind" || hasVersion && k.Value == versionKey {
			continue
		}
		f, ok := lookup(fields, k.Value)
		if !ok {
			return d.unknownKey(k, sub, v.Type(), variant, kind, keys(fields))
		}
		if err := d.decode(val, sub, f.v, f.unit); err != nil {
			return err
		}
	}
	return nil
}

// checkKeys requires plain, distinct keys.
func (d *decoder) checkKeys(n *yaml.Node, path string) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			return d.errorf(n.Content[i], path, "want a plain key, got %s", kindName(n.Content[i]))
		}
		if seen[k.Value] {
			return d.errorf(k, join(path, k.Value), "key given twice")
		}
		seen[k.Value] = true
	}
	return nil
}

// chooseKind reads a Variant section's kind key (absent: the default
// kind), chooses it, and returns the section's keys with the chosen
// settings' keys added.
func (d *decoder) chooseKind(n *yaml.Node, path string, variant sim.Variant, fields []field) ([]field, string, any, error) {
	kn, text := n, ""
	for i := 0; i+1 < len(n.Content); i += 2 {
		if resolve(n.Content[i]).Value == "kind" {
			kn = resolve(n.Content[i+1])
			s, err := d.scalarText(kn, join(path, "kind"))
			if err != nil {
				return nil, "", nil, err
			}
			text = s
		}
	}
	if _, ok := variant.(*sim.ConsumerSpec); ok && text == "" {
		text = d.consumerKind
	}
	set, err := variant.Choose(text)
	if err != nil {
		return nil, "", nil, d.errorf(kn, join(path, "kind"), "%v", err)
	}
	out := append(append([]field(nil), fields...), fieldsOf(reflect.ValueOf(set).Elem())...)
	kind := text
	if kind == "" {
		kind = variant.Kinds()[0]
	}
	return out, kind, set, nil
}

// versionKey is a Variant section's release key (engine.version): a
// profile of defaults, so it is applied before the section's other keys,
// wherever it stands, and they override it.
const versionKey = "version"

// versioned is a kind's settings with release profiles (pop.Config).
type versioned interface{ ApplyVersion(string) error }

// applyVersion applies the section's version key, if any, to set.
func (d *decoder) applyVersion(n *yaml.Node, path string, set any) error {
	vs, ok := set.(versioned)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if resolve(n.Content[i]).Value != versionKey || !ok {
			continue
		}
		vn := resolve(n.Content[i+1])
		text, err := d.scalarText(vn, join(path, versionKey))
		if err != nil {
			return err
		}
		if text == "" { // no release: popsim's defaults
			continue
		}
		if err := vs.ApplyVersion(text); err != nil {
			return d.errorf(vn, join(path, versionKey), "%s", strings.TrimPrefix(err.Error(), "pop: "))
		}
	}
	return nil
}

func lookup(fs []field, key string) (field, bool) {
	for _, f := range fs {
		if f.key == key {
			return f, true
		}
	}
	return field{}, false
}

// refusedKeys are keys a reader may expect that popsim deliberately does
// not model, by struct type name and key: each says why, rather than
// suggesting the nearest key (which for switchToPull is its opposite).
var refusedKeys = map[string]string{
	"GroupSpec.switchToPull": "not modelled: a switch goes from PULL to POP only (switchToPop, on a group that starts in PULL mode); " +
		"switching back to PULL needs the POP retry topic drained by pull (docs/rocketmq/clients.md §4.1.1)",
}

// unknownKey reports a key the struct does not have: a key of another
// kind of a Variant section, a key popsim refuses, or an unknown (perhaps
// misspelt) one.
func (d *decoder) unknownKey(k *yaml.Node, path string, t reflect.Type, variant sim.Variant, kind string, known []string) error {
	if why, ok := refusedKeys[t.Name()+"."+k.Value]; ok {
		return d.errorf(k, path, "%s", why)
	}
	if variant != nil {
		var owners []string
		byKind := sim.SettingsKeys(t)
		for _, other := range variant.Kinds() {
			if contains(byKind[other], k.Value) {
				owners = append(owners, other)
			}
		}
		noun := strings.ToLower(t.Name())
		noun = strings.TrimSuffix(noun, "spec")
		if len(owners) > 0 {
			return d.errorf(k, path, "only %s %ss have %s: this one is %s", andList(owners), noun, k.Value, kind)
		}
		return d.errorf(k, path, "unknown field%s; want one of %s (the keys of a %s %s)", suggest(k.Value, known), strings.Join(known, ", "), kind, noun)
	}
	return d.errorf(k, path, "unknown field%s; want one of %s", suggest(k.Value, known), strings.Join(known, ", "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// maxListLen bounds every list in a scenario file.
const maxListLen = 4096

func (d *decoder) decodeSlice(n *yaml.Node, path string, v reflect.Value) error {
	if n.Kind != yaml.SequenceNode {
		return d.errorf(n, path, "want a list (lines starting with \"- \"), got %s", kindName(n))
	}
	if len(n.Content) > maxListLen {
		return d.errorf(n, path, "%d entries: want at most %d", len(n.Content), maxListLen)
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		if err := d.decode(item, fmt.Sprintf("%s[%d]", path, i), out.Index(i), ""); err != nil {
			return err
		}
	}
	v.Set(out)
	return nil
}

func (d *decoder) decodeBool(n *yaml.Node, path string, v reflect.Value) error {
	s, err := d.scalarText(n, path)
	if err != nil {
		return err
	}
	switch s {
	case "true":
		v.SetBool(true)
	case "false":
		v.SetBool(false)
	default:
		return d.errorf(n, path, "%q: want true or false", s)
	}
	return nil
}

func (d *decoder) decodeInt(n *yaml.Node, path string, v reflect.Value, unit string) error {
	s, err := d.scalarText(n, path)
	if err != nil {
		return err
	}
	digits := strings.ReplaceAll(s, "_", "")
	if v.Kind() == reflect.Uint64 {
		u, err := strconv.ParseUint(digits, 10, 64)
		if err != nil || digits == "" || digits[0] == '+' {
			return d.errorf(n, path, "%q: want a whole number from 0 to %d", s, uint64(1<<64-1))
		}
		v.SetUint(u)
		return nil
	}
	if unit == "ms" && digits != "" && !allDigits(digits) {
		return d.decodeMillis(n, path, v, s)
	}
	i, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || digits == "" || digits[0] == '+' {
		if unit == "ms" {
			return d.errorf(n, path, "%q: want whole milliseconds (10000) or a duration of whole milliseconds (10s, 250ms)", s)
		}
		return d.errorf(n, path, "%q: want a whole number such as 10", s)
	}
	if v.OverflowInt(i) {
		return d.errorf(n, path, "%d out of range: want a %d-bit integer", i, v.Type().Bits())
	}
	v.SetInt(i)
	return nil
}

// decodeMillis sets a millisecond setting written as a duration (10s).
func (d *decoder) decodeMillis(n *yaml.Node, path string, v reflect.Value, s string) error {
	dur, err := clock.ParseDuration(s)
	if err != nil || dur%clock.Millisecond != 0 || dur < 0 {
		return d.errorf(n, path, "%q: want whole milliseconds (10000) or a duration of whole milliseconds (10s, 250ms)", s)
	}
	v.SetInt(dur.Millis())
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// suggest returns ` (did you mean "x"?)` for the closest known name, if
// it is close enough to be a misspelling.
func suggest(key string, names []string) string {
	best, bestD := "", 1<<30
	for _, n := range names {
		if d := editDistance(strings.ToLower(key), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" || bestD > 2+len(key)/4 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// lineOf is the line of the node at path in the document (its value), or
// of the nearest enclosing node the document has; 0 when not even the
// path's first key is written. Paths are the decoder's and sim's:
// consumers[0].batch.
func lineOf(root *yaml.Node, path string) int {
	segs, err := splitPath(path)
	if err != nil || path == "" {
		return 0
	}
	n, line := resolve(root), 0
	for j := 0; j < len(segs); j++ {
		s := segs[j]
		if !s.isIdx && n.Kind == yaml.MappingNode {
			if key, used := dottedKey(n, segs[j:]); used > 1 {
				s.key, j = key, j+used-1
			}
		}
		var next *yaml.Node
		switch {
		case s.isIdx && n.Kind == yaml.SequenceNode && s.index >= 0 && s.index < len(n.Content):
			next = n.Content[s.index]
		case !s.isIdx && n.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if resolve(n.Content[i]).Value == s.key {
					next = n.Content[i+1]
				}
			}
		}
		if next = resolve(next); next == nil {
			break
		}
		n, line = next, next.Line
	}
	return line
}

// andList joins names as "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
