package scenarios

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"popsim/clock"
)

// The decoder walks a yaml.Node tree into the Spec types below by
// reflection, driven by two struct tags:
//
//	yaml:"name"          the key in the file (every exported field has one)
//	range:"lo..hi"       the allowed range of an integer or duration field;
//	                     either bound may be omitted ("1..", "..32")
//
// It is strict: unknown keys, repeated keys, wrong node kinds and values
// outside their range are errors that name the file, the line, the field's
// path (consumers[0].batch) and what is allowed. It never panics on input:
// recursion follows the Go types, not the document, so its depth is bounded
// whatever the file contains.

// FieldError is an error in one field of a scenario file.
type FieldError struct {
	Source string // the file name, or builtin/<name>.yaml
	Line   int    // 1-based; 0 when the value came from a -set override
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

// overrideLine marks nodes created by a -set override.
const overrideLine = -1

// scalar is implemented by field types with their own text form
// (durations, rates, distributions, probabilities).
type scalar interface {
	setText(s string) error
}

type decoder struct {
	source string
	lines  map[string]int // field path -> line, for later cross-field errors
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

var scalarType = reflect.TypeFor[scalar]()

func (d *decoder) decode(n *yaml.Node, path string, v reflect.Value, rng string) error {
	n = resolve(n)
	if n == nil || n.Kind == yaml.AliasNode {
		return &FieldError{Source: d.source, Path: path, Msg: "alias chain too long"}
	}
	d.lines[path] = n.Line
	if v.CanAddr() && v.Addr().Type().Implements(scalarType) {
		s, err := d.scalarText(n, path)
		if err != nil {
			return err
		}
		if err := v.Addr().Interface().(scalar).setText(s); err != nil {
			return d.errorf(n, path, "%v", err)
		}
		return d.checkRange(n, path, v, rng)
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
		return d.decodeInt(n, path, v, rng)
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

func (d *decoder) decodeStruct(n *yaml.Node, path string, v reflect.Value) error {
	if n.Kind != yaml.MappingNode {
		return d.errorf(n, path, "want a mapping of %s, got %s", strings.Join(fieldNames(v.Type()), ", "), kindName(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolve(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			return d.errorf(n.Content[i], path, "want a plain key, got %s", kindName(n.Content[i]))
		}
		sub := join(path, k.Value)
		if seen[k.Value] {
			return d.errorf(k, sub, "key given twice")
		}
		seen[k.Value] = true
		f, ok := fieldByKey(v.Type(), k.Value)
		if !ok {
			return d.errorf(k, sub, "unknown field%s; want one of %s", suggest(k.Value, fieldNames(v.Type())), strings.Join(fieldNames(v.Type()), ", "))
		}
		if err := d.decode(val, sub, v.FieldByIndex(f.Index), f.Tag.Get("range")); err != nil {
			return err
		}
	}
	return nil
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
		elem := out.Index(i)
		if def, ok := elem.Addr().Interface().(interface{ setDefaults() }); ok {
			def.setDefaults()
		}
		if err := d.decode(item, fmt.Sprintf("%s[%d]", path, i), elem, ""); err != nil {
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

func (d *decoder) decodeInt(n *yaml.Node, path string, v reflect.Value, rng string) error {
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
		return d.checkRange(n, path, v, rng)
	}
	i, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || digits == "" || digits[0] == '+' {
		return d.errorf(n, path, "%q: want a whole number such as 10", s)
	}
	if v.OverflowInt(i) {
		return d.errorf(n, path, "%d out of range: want %s", i, rangeText(rng, v))
	}
	v.SetInt(i)
	return d.checkRange(n, path, v, rng)
}

// checkRange applies a range:"lo..hi" tag to an integer, uint or Duration.
func (d *decoder) checkRange(n *yaml.Node, path string, v reflect.Value, rng string) error {
	if rng == "" {
		return nil
	}
	lo, hi, err := parseRange(rng, v.Type())
	if err != nil {
		panic(fmt.Sprintf("scenarios: field %s: bad range tag %q: %v", path, rng, err))
	}
	var x int64
	if v.Kind() == reflect.Uint64 {
		if v.Uint() > 1<<62 {
			return d.errorf(n, path, "%s out of range: want %s", n.Value, rng)
		}
		x = int64(v.Uint())
	} else {
		x = v.Int()
	}
	if x < lo || x > hi {
		return d.errorf(n, path, "%s out of range: want %s", n.Value, rng)
	}
	return nil
}

func rangeText(rng string, v reflect.Value) string {
	if rng != "" {
		return rng
	}
	return "a " + strconv.Itoa(v.Type().Bits()) + "-bit integer"
}

var (
	durationType = reflect.TypeFor[Duration]()
	ppmType      = reflect.TypeFor[PPM]()
)

// parseRange parses "lo..hi", each bound optional, in the field's unit.
func parseRange(rng string, t reflect.Type) (lo, hi int64, err error) {
	a, b, ok := strings.Cut(rng, "..")
	if !ok {
		return 0, 0, errors.New("want lo..hi")
	}
	lo, hi = -1<<63, 1<<63-1
	parse := func(s string) (int64, error) {
		switch t {
		case durationType:
			d, err := clock.ParseDuration(s)
			return int64(d), err
		case ppmType:
			return parsePPM(s)
		}
		return strconv.ParseInt(s, 10, 64)
	}
	if a != "" {
		if lo, err = parse(a); err != nil {
			return 0, 0, err
		}
	}
	if b != "" {
		if hi, err = parse(b); err != nil {
			return 0, 0, err
		}
	}
	return lo, hi, nil
}

// fieldByKey finds the struct field whose yaml tag is key.
func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if yamlKey(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func yamlKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if k := yamlKey(t.Field(i)); k != "" {
			names = append(names, k)
		}
	}
	return names
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
