package rapidfail_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"popsim/internal/rapidfail"
)

func TestMain(m *testing.M) { os.Exit(rapidfail.Main(m)) }

// envFail makes TestAlwaysFails fail; it is set only in the child process
// TestFailingRunLeavesNoFailFile starts.
const envFail = "RAPIDFAIL_TEST_FAIL"

// TestAlwaysFails is a property that fails at once when envFail is set
// (and is skipped otherwise): the child of the test below.
func TestAlwaysFails(t *testing.T) {
	if os.Getenv(envFail) == "" {
		t.Skip("run by TestFailingRunLeavesNoFailFile")
	}
	rapid.Check(t, func(rt *rapid.T) {
		if rapid.IntRange(0, 10).Draw(rt, "n") >= 0 {
			rt.Fatalf("always fails")
		}
	})
}

// TestFailingRunLeavesNoFailFile runs this test binary in a scratch
// package directory holding a committed fail file, makes a rapid property
// fail, and checks that the new fail file left testdata/rapid/ (only the
// committed one remains) for the fail directory, and that the command to
// replay it was printed. Without Main the new file stays in
// testdata/rapid/, where the next run would replay it.
func TestFailingRunLeavesNoFailFile(t *testing.T) {
	if os.Getenv(envFail) != "" {
		t.Skip("child")
	}
	pkg, out := t.TempDir(), t.TempDir()
	committed := filepath.Join(pkg, "testdata", "rapid", "TestOther", "TestOther-regression.fail")
	if err := os.MkdirAll(filepath.Dir(committed), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(committed, []byte("v0.4.8#0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAlwaysFails$")
	cmd.Dir = pkg
	cmd.Env = append(os.Environ(), envFail+"=1", rapidfail.EnvDir+"="+out)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err == nil {
		t.Fatalf("the child passed; want the property to fail:\n%s", stderr.String())
	}
	left, _ := filepath.Glob(filepath.Join(pkg, "testdata", "rapid", "*", "*"))
	if len(left) != 1 || left[0] != committed {
		t.Errorf("testdata/rapid holds %v after the failing run, want only the committed %s", left, committed)
	}
	if _, err := os.Stat(filepath.Join(pkg, "testdata", "rapid", "TestAlwaysFails")); !os.IsNotExist(err) {
		t.Errorf("the directory the failing run created is still there (stat: %v)", err)
	}
	moved, _ := filepath.Glob(filepath.Join(out, "TestAlwaysFails", "TestAlwaysFails-*.fail"))
	if len(moved) != 1 {
		t.Fatalf("fail directory holds %v, want one TestAlwaysFails fail file; child output:\n%s", moved, stderr.String())
	}
	if want := "-rapid.failfile=" + moved[0]; !strings.Contains(stderr.String(), want) {
		t.Errorf("the child's output does not say %q:\n%s", want, stderr.String())
	}
}

// TestSweepKeepsWhatExisted: a run that writes nothing moves nothing and
// removes nothing.
func TestSweepKeepsWhatExisted(t *testing.T) {
	pkg := t.TempDir()
	f := filepath.Join(pkg, "testdata", "rapid", "TestX", "TestX-kept.fail")
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	before := rapidfail.Snapshot(pkg)
	var w bytes.Buffer
	n, err := rapidfail.Sweep(pkg, before, t.TempDir(), &w)
	if err != nil || n != 0 || w.Len() != 0 {
		t.Fatalf("Sweep = %d, %v, %q; want 0, nil, nothing", n, err, w.String())
	}
	if _, err := os.Stat(f); err != nil {
		t.Fatalf("the existing fail file is gone: %v", err)
	}
}

// recTB is a rapid.TB that records errors instead of failing its test.
type recTB struct {
	*testing.T
	name   string
	errors []string
}

func (r *recTB) Name() string { return r.name }
func (r *recTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestStrictFailsOnSkippedFailFile: a committed fail file that rapid can
// no longer replay fails a Strict check (one whose property now draws more
// than the file records, and one rapid cannot read); a file that replays
// does not.
func TestStrictFailsOnSkippedFailFile(t *testing.T) {
	for _, c := range []struct {
		name    string
		draws   int // what the property draws now; the file records one
		corrupt bool
		wantErr bool
	}{
		{"replays", 1, false, false},
		{"overrun", 3, false, true},
		{"unreadable", 1, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			failing := &recTB{T: t, name: "TestFixture"}
			rapid.Check(failing, func(rt *rapid.T) {
				rapid.Uint64().Draw(rt, "v0")
				rt.Fatalf("fails")
			})
			files, _ := filepath.Glob(filepath.Join("testdata", "rapid", "TestFixture", "*.fail"))
			if len(failing.errors) == 0 || len(files) != 1 {
				t.Fatalf("the failing property left fail files %v, errors %q; want one of each", files, failing.errors)
			}
			if c.corrupt {
				if err := os.WriteFile(files[0], []byte("no version here\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rec := &recTB{T: t, name: "TestFixture"}
			rapid.Check(rapidfail.Strict(rec), func(rt *rapid.T) {
				for i := range c.draws {
					rapid.Uint64().Draw(rt, fmt.Sprint("v", i))
				}
			})
			if got := len(rec.errors) > 0; got != c.wantErr {
				t.Errorf("errors %q, want some: %v", rec.errors, c.wantErr)
			}
		})
	}
}
