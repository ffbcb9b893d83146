package scenarios

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"strconv"

	"go.yaml.in/yaml/v3"

	"popsim/sim"
)

// The encoder is the decoder's inverse: it prints a Spec as a YAML
// document with the same keys, each value in its type's text form.

var marshalerType = reflect.TypeFor[encoding.TextMarshaler]()

// Effective returns the scenario's effective configuration as a YAML
// document: every key, with the simulator's defaults filled in and every
// value in its canonical text form; what a run of the scenario uses.
// Loading it gives the same configuration (and config hash).
func (s *Scenario) Effective() ([]byte, error) {
	spec := s.Spec
	spec.Config = spec.Config.WithDefaults()
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(encode(reflect.ValueOf(spec))); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// encode returns the node of v.
func encode(v reflect.Value) *yaml.Node {
	if v.Type().Implements(marshalerType) {
		b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			panic(fmt.Sprintf("scenarios: %s does not print: %v", v.Type(), err))
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(b)}
	}
	switch v.Kind() {
	case reflect.Struct:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		encodeFields(n, v)
		return n
	case reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for i := 0; i < v.Len(); i++ {
			n.Content = append(n.Content, encode(v.Index(i)))
		}
		if v.Len() > 0 && v.Index(0).Kind() == reflect.Struct {
			n.Style = 0
		}
		return n
	case reflect.String:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v.String()}
	case reflect.Bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v.Bool())}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(v.Int(), 10)}
	case reflect.Uint64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatUint(v.Uint(), 10)}
	}
	panic(fmt.Sprintf("scenarios: cannot print a %s", v.Type()))
}

// encodeFields adds v's keys to the mapping n: its own fields, those of
// inline structs and of an inline Variant's settings.
func encodeFields(n *yaml.Node, v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		key, inline, skip := sim.FieldKey(t.Field(i))
		f := v.Field(i)
		switch {
		case skip:
		case inline && f.Kind() == reflect.Interface:
			if !f.IsNil() {
				encodeFields(n, f.Elem().Elem())
			}
		case inline:
			encodeFields(n, f)
		case omitted(f):
		default:
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, encode(f))
		}
	}
}

// omitted reports whether a field is left out of the effective
// configuration: an optional section or value that is off (its IsZero
// says so: the broker cost model without cores, a cost not given), which
// loads back as the same zero value.
func omitted(f reflect.Value) bool {
	z, ok := f.Interface().(interface{ IsZero() bool })
	return ok && z.IsZero()
}

// canonicalValue returns value, a setting of path (consumers[*].batch),
// in its type's canonical text form: what a report should print for it.
// It returns value unchanged where the path names no single setting or
// the value does not parse (loading reports that).
func canonicalValue(path, value string) string {
	segs, err := splitPath(path)
	if err != nil {
		return value
	}
	t, unit, ok := typeAt(reflect.TypeFor[Spec](), segs)
	if !ok || t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(unmarshalerType) || t.Kind() == reflect.Slice {
		return value
	}
	v := reflect.New(t).Elem()
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
	if err := (&decoder{}).decode(n, path, v, unit); err != nil {
		return value
	}
	return encode(v).Value
}

// typeAt follows a key path through the configuration's types and
// returns the type at its end with its unit tag. A Variant section's
// keys include every kind's settings.
func typeAt(t reflect.Type, segs []segment) (reflect.Type, string, bool) {
	unit := ""
	for _, s := range segs {
		switch {
		case s.isIdx && t.Kind() == reflect.Slice:
			t = t.Elem()
		case !s.isIdx && t.Kind() == reflect.Struct:
			f, ok := fieldType(t, s.key)
			if !ok {
				return nil, "", false
			}
			t, unit = f.Type, f.Tag.Get("unit")
		default:
			return nil, "", false
		}
	}
	return t, unit, true
}

// fieldType finds the struct field of t (or of its inline structs, or of
// any kind's settings when t is a Variant) with the given key.
func fieldType(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		k, inline, skip := sim.FieldKey(f)
		switch {
		case skip:
		case inline && f.Type.Kind() == reflect.Struct:
			if g, ok := fieldType(f.Type, key); ok {
				return g, true
			}
		case !inline && k == key:
			return f, true
		}
	}
	if reflect.PointerTo(t).Implements(variantType) {
		probe := reflect.New(t).Interface().(sim.Variant)
		for _, kind := range probe.Kinds() {
			set, err := reflect.New(t).Interface().(sim.Variant).Choose(kind)
			if err != nil {
				continue
			}
			if g, ok := fieldType(reflect.TypeOf(set).Elem(), key); ok {
				return g, true
			}
		}
	}
	return reflect.StructField{}, false
}
