package rapidfail

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// EnvDir overrides where moved fail files go.
const EnvDir = "POPSIM_RAPID_FAILDIR"

// failRoot is where rapid writes fail files, relative to the package
// directory (the test binary's working directory).
const failRoot = "testdata/rapid"

// Main runs m and moves the fail files the run wrote (see the package
// comment). It returns m.Run's exit code, or 1 if a fail file could not
// be moved.
func Main(m *testing.M) int {
	before := snapshot(".")
	code := m.Run()
	_, err := Sweep(".", before, dest("."), os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rapidfail: %v\n", err)
		return max(code, 1)
	}
	return code
}

// State is what existed under a package's testdata/rapid before a run:
// the fail files and the directories.
type State struct {
	files, dirs map[string]bool
}

// snapshot lists the fail files and directories under pkgDir/testdata/rapid.
func snapshot(pkgDir string) State {
	s := State{files: map[string]bool{}, dirs: map[string]bool{}}
	for _, d := range []string{"testdata", failRoot} {
		if fi, err := os.Stat(filepath.Join(pkgDir, d)); err == nil && fi.IsDir() {
			s.dirs[d] = true
		}
	}
	ents, _ := filepath.Glob(filepath.Join(pkgDir, failRoot, "*"))
	for _, e := range ents {
		rel, _ := filepath.Rel(pkgDir, e)
		s.dirs[filepath.ToSlash(rel)] = true
	}
	files, _ := filepath.Glob(filepath.Join(pkgDir, failRoot, "*", "*.fail"))
	for _, f := range files {
		rel, _ := filepath.Rel(pkgDir, f)
		s.files[filepath.ToSlash(rel)] = true
	}
	return s
}

// Snapshot is snapshot for callers that drive Sweep themselves.
func Snapshot(pkgDir string) State { return snapshot(pkgDir) }

// Sweep moves every fail file under pkgDir/testdata/rapid that is not in
// before to dir/<Test>/, removes the directories that did not exist
// before and are now empty, and reports each move on w. It returns how
// many files it moved.
func Sweep(pkgDir string, before State, dir string, w io.Writer) (int, error) {
	after := snapshot(pkgDir)
	var fresh []string
	for f := range after.files {
		if !before.files[f] {
			fresh = append(fresh, f)
		}
	}
	slices.Sort(fresh)
	for _, f := range fresh {
		test := filepath.Base(filepath.Dir(f))
		to := filepath.Join(dir, test, filepath.Base(f))
		if err := move(filepath.Join(pkgDir, f), to); err != nil {
			return 0, err
		}
		fmt.Fprintf(w, "rapidfail: moved the new fail file %s out of the source tree to %s\n"+
			"rapidfail: replay it with: go test -run '^%s$' -rapid.failfile=%s\n"+
			"rapidfail: to keep it as a regression, copy it to %s/%s/ under a name that says what it catches\n",
			f, to, test, to, failRoot, test)
	}
	var dirs []string
	for d := range after.dirs {
		if !before.dirs[d] {
			dirs = append(dirs, d)
		}
	}
	// Deepest first, so a parent is empty when its turn comes.
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range dirs {
		os.Remove(filepath.Join(pkgDir, d)) // fails, harmlessly, when not empty
	}
	for _, d := range []string{failRoot, "testdata"} {
		if !before.dirs[d] {
			os.Remove(filepath.Join(pkgDir, d))
		}
	}
	return len(fresh), nil
}

// dest is $POPSIM_RAPID_FAILDIR, or out/rapid/<package dir> at the module
// root, or the system temporary directory outside a module.
func dest(pkgDir string) string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	abs, err := filepath.Abs(pkgDir)
	if err != nil {
		return filepath.Join(os.TempDir(), "popsim-rapid")
	}
	for root := abs; ; root = filepath.Dir(root) {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			rel, _ := filepath.Rel(root, abs)
			return filepath.Join(root, "out", "rapid", rel)
		}
		if filepath.Dir(root) == root {
			return filepath.Join(os.TempDir(), "popsim-rapid")
		}
	}
}

// move renames from to to, copying when they are on different devices.
func move(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := os.Rename(from, to); err == nil {
		return nil
	}
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	tmp := to + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, to); err != nil {
		return err
	}
	return os.Remove(from)
}
