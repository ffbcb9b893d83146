package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"popsim/sim"
)

// Scenario is a loaded and checked scenario file.
type Scenario struct {
	Spec
	Source    string     // the file name, or builtin/<name>.yaml
	Text      []byte     // the file as written
	Overrides []Override // applied on top of Text, in order

	root *yaml.Node // the document with the overrides, for the lines of errors found after decoding
}

// MaxFileSize bounds a scenario file.
const MaxFileSize = 1 << 20

// LoadFile reads and loads a scenario file.
func LoadFile(path string, overrides ...Override) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("scenarios: read %s: %w", path, err)
	}
	return Load(path, data, overrides...)
}

// Load decodes a scenario file's text; source names it in errors. The
// overrides are applied before decoding. Every error is a *FieldError or
// names the source.
func Load(source string, data []byte, overrides ...Override) (*Scenario, error) {
	if len(data) > MaxFileSize {
		return nil, &FieldError{Source: source, Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)}
	}
	root, err := parseYAML(source, data)
	if err != nil {
		return nil, err
	}
	for _, o := range overrides {
		if err := o.apply(root); err != nil {
			return nil, &FieldError{Source: source, Line: overrideLine, Msg: err.Error()}
		}
	}
	s := &Scenario{Spec: defaultSpec(), Source: source, Text: data, Overrides: overrides, root: root}
	d := &decoder{source: source, consumerKind: sim.EngineConsumerKind(engineKind(root))}
	if err := d.decode(root, "", reflect.ValueOf(&s.Spec).Elem(), ""); err != nil {
		return nil, err
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

// engineKind is the engine section's kind as written ("" when absent or
// not a plain value: the decoder reports that).
func engineKind(root *yaml.Node) string {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if resolve(root.Content[i]).Value != "engine" {
			continue
		}
		e := resolve(root.Content[i+1])
		if e == nil || e.Kind != yaml.MappingNode {
			return ""
		}
		for j := 0; j+1 < len(e.Content); j += 2 {
			if k, v := resolve(e.Content[j]), resolve(e.Content[j+1]); k.Value == "kind" && v != nil && v.Kind == yaml.ScalarNode {
				return v.Value
			}
		}
	}
	return ""
}

// parseYAML parses exactly one YAML document whose root is a mapping.
func parseYAML(source string, data []byte) (root *yaml.Node, err error) {
	defer func() {
		// yaml.v3 is third-party code on untrusted input: a panic in it is
		// the input's fault as far as the user is concerned.
		if r := recover(); r != nil {
			root, err = nil, &FieldError{Source: source, Msg: fmt.Sprintf("not valid YAML (%v)", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FieldError{Source: source, Msg: "the file is empty: want a scenario (name:, topics:, producers:, consumers: ...)"}
		}
		return nil, yamlError(source, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			return nil, yamlError(source, err)
		}
		return nil, &FieldError{Source: source, Line: line, Msg: "a second YAML document (---): want exactly one scenario per file"}
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		n := &doc
		if len(doc.Content) == 1 {
			n = doc.Content[0]
		}
		return nil, &FieldError{Source: source, Line: n.Line, Msg: "want a mapping of scenario fields (name:, topics:, ...) at the top level, got " + kindName(n)}
	}
	return doc.Content[0], nil
}

// yamlError turns "yaml: line 3: did not find expected key" into
// "file:3: not valid YAML: did not find expected key". The YAML library
// reports syntax errors only as text of this form.
func yamlError(source string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		num, text, ok := strings.Cut(rest, ": ")
		if line, err := strconv.Atoi(num); ok && err == nil {
			return &FieldError{Source: source, Line: line, Msg: "not valid YAML: " + text}
		}
	}
	return &FieldError{Source: source, Msg: "not valid YAML: " + msg}
}

// errAt returns a FieldError at the line where path was written.
func (s *Scenario) errAt(path, format string, a ...any) *FieldError {
	return &FieldError{Source: s.Source, Line: lineOf(s.root, path), Path: path, Msg: fmt.Sprintf(format, a...)}
}

var scenarioNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
