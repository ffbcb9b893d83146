package scenarios

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Names returns the built-in scenario names, sorted, with default first.
func Names() []string {
	entries, err := fs.ReadDir(builtinFS, "builtin")
	if err != nil {
		panic("scenarios: embedded builtin folder unreadable: " + err.Error())
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == "default") != (names[j] == "default") {
			return names[i] == "default"
		}
		return names[i] < names[j]
	})
	return names
}

// BuiltinText returns the embedded file of a built-in scenario.
func BuiltinText(name string) ([]byte, error) {
	data, err := builtinFS.ReadFile(path.Join("builtin", name+".yaml"))
	if err != nil || strings.ContainsAny(name, "/\\.") {
		return nil, fmt.Errorf("scenarios: no built-in scenario %q: want one of %s (popsim list)", name, strings.Join(Names(), ", "))
	}
	return data, nil
}

// Builtin loads a built-in scenario with overrides applied.
func Builtin(name string, overrides ...Override) (*Scenario, error) {
	data, err := BuiltinText(name)
	if err != nil {
		return nil, err
	}
	return Load("builtin/"+name+".yaml", data, overrides...)
}

// Summary returns the first line of the scenario's description.
func (s *Scenario) Summary() string {
	line, _, _ := strings.Cut(strings.TrimSpace(s.Description), "\n")
	return line
}
