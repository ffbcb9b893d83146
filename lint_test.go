package popsim_test

// lint_test enforces the architecture guide mechanically: imports point
// down the layers, and the deterministic packages use no wall clock, no
// goroutines and no global randomness.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "popsim"

// layer of each top-level package directory (sub-packages inherit it,
// unless listed themselves).
var layers = map[string]int{
	"clock":  0,
	"model":  1,
	"filter": 2, "stats": 2,
	"pop": 3, "share": 3, "sqs": 3, "workload": 3, "report": 3,
	"proxy":     4,
	"sim":       5,
	"scenarios": 6,
	"sweep":     7, "internal": 7, "serve": 7,
	"cmd": 8,
	// leaf utilities of the commands that internal/bench uses too: the
	// machine's memory and the collector's heap floor (they import no
	// popsim package)
	"internal/meminfo": 6, "internal/gcfloor": 6,
}

// layerOf is the layer of a package directory: its longest prefix in
// layers (a sub-package inherits its parent's).
func layerOf(dir string) (int, bool) {
	for d := dir; ; {
		if l, ok := layers[d]; ok {
			return l, true
		}
		i := strings.LastIndex(d, "/")
		if i < 0 {
			return 0, false
		}
		d = d[:i]
	}
}

// deterministic packages: no wall clock, goroutines, global rand, or OS.
var deterministic = []string{"pop", "share", "sqs", "proxy", "model", "stats", "filter", "sim", "workload"}

type goFile struct {
	dir  string // package directory relative to the module root
	path string
	f    *ast.File
}

func parseTree(t *testing.T) []goFile {
	t.Helper()
	var out []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "." || d.Name() == "testdata" || d.Name() == "results") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		out = append(out, goFile{dir: filepath.ToSlash(filepath.Dir(p)), path: p, f: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func top(dir string) string { return strings.SplitN(dir, "/", 2)[0] }

func TestImportsPointDown(t *testing.T) {
	for _, gf := range parseTree(t) {
		from, ok := layerOf(gf.dir)
		if !ok {
			if gf.dir != "." {
				t.Errorf("%s: package directory %s has no layer in lint_test.go", gf.path, gf.dir)
			}
			continue
		}
		for _, imp := range gf.f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(p, module+"/")
			if sameSubtree(gf.dir, dep) {
				continue
			}
			if to, _ := layerOf(dep); to >= from {
				t.Errorf("%s imports %s: layer %d may only import lower layers (got %d)", gf.path, p, from, to)
			}
		}
	}
}

// sameSubtree allows a package to import its own parent or children
// (sim -> sim/check, pop/internal/ref -> pop).
func sameSubtree(a, b string) bool {
	return strings.HasPrefix(a+"/", b+"/") || strings.HasPrefix(b+"/", a+"/")
}

var forbiddenImports = map[string]string{
	"math/rand": "use math/rand/v2 with an explicit PCG source",
	"sync":      "the deterministic core is single-threaded",
	"os":        "no I/O in the deterministic core",
}

var forbiddenCalls = map[string]bool{"time.Now": true, "time.Since": true, "time.Sleep": true, "time.After": true, "time.Tick": true, "time.NewTimer": true, "time.NewTicker": true}

func TestDeterministicPackages(t *testing.T) {
	for _, gf := range parseTree(t) {
		if !isDeterministic(gf.dir) {
			continue
		}
		for _, imp := range gf.f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if why, bad := forbiddenImports[p]; bad {
				t.Errorf("%s imports %s: %s", gf.path, p, why)
			}
		}
		ast.Inspect(gf.f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: go statement in a deterministic package", gf.path)
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && forbiddenCalls[id.Name+"."+x.Sel.Name] {
					t.Errorf("%s: %s.%s in a deterministic package: take time from the caller", gf.path, id.Name, x.Sel.Name)
				}
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "rand" && !strings.HasPrefix(x.Sel.Name, "New") && x.Sel.Name != "Rand" && x.Sel.Name != "PCG" && x.Sel.Name != "Source" {
					t.Errorf("%s: rand.%s uses the global source: draw from an explicit *rand.Rand", gf.path, x.Sel.Name)
				}
			}
			return true
		})
	}
}

func isDeterministic(dir string) bool {
	for _, d := range deterministic {
		if top(dir) == d {
			return true
		}
	}
	return false
}

func TestEveryPackageHasDocGo(t *testing.T) {
	dirs := map[string]bool{}
	hasDoc := map[string]bool{}
	for _, gf := range parseTree(t) {
		dirs[gf.dir] = true
		if filepath.Base(gf.path) == "doc.go" {
			hasDoc[gf.dir] = true
		}
	}
	for d := range dirs {
		if d != "." && !hasDoc[d] && !strings.HasPrefix(d, "cmd/") {
			t.Errorf("package %s has no doc.go", d)
		}
	}
}

// TestRapidPackagesSweepFailFiles: a package whose tests use rapid has a
// TestMain that runs rapidfail.Main, so a failing run's fail file goes to
// out/rapid/ and testdata/rapid/ holds only the regressions committed on
// purpose (a mutation check's fail files once landed in sim/check).
func TestRapidPackagesSweepFailFiles(t *testing.T) {
	usesRapid, sweeps := map[string]bool{}, map[string]bool{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		usesRapid[dir] = usesRapid[dir] || strings.Contains(string(src), `"pgregory.net/rapid"`)
		sweeps[dir] = sweeps[dir] || strings.Contains(string(src), "rapidfail.Main(m)")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for d := range usesRapid {
		if usesRapid[d] && !sweeps[d] && !strings.HasPrefix(d, ".") {
			t.Errorf("package %s uses rapid but has no TestMain calling rapidfail.Main", d)
		}
	}
}
