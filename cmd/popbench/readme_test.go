package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"popsim/internal/readme"
)

// TestREADME runs every `go run ./cmd/popbench ...` line of README.md's
// sh blocks, in order, in one scratch folder holding a copy of
// results/bench, through realMain (internal/readme describes the
// extraction and the markers). It checks exit statuses, marked texts, what
// the README says each subcommand does, and that no command touched the
// committed results/bench (a subset used to overwrite it).
func TestREADME(t *testing.T) {
	cmds, err := readme.File("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var mine []readme.Command
	for _, c := range cmds {
		if c.Prog == "popbench" {
			mine = append(mine, c)
		}
	}
	if len(mine) < 4 {
		t.Fatalf("found %d popbench commands in README.md; the extraction is broken", len(mine))
	}
	committed := snapshot(t, "../../results/bench")
	dir := t.TempDir()
	restore(t, committed, filepath.Join(dir, "results", "bench"))
	t.Chdir(dir)
	for _, c := range mine {
		t.Run(fmt.Sprintf("line%d", c.Line), func(t *testing.T) {
			code, out, errs := runMain(c.Args...)
			if code != c.Exit {
				t.Fatalf("README.md:%d: %s\nexit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.Line, c.Text, code, c.Exit, out, errs)
			}
			for _, p := range c.Prints {
				if !strings.Contains(out, p) {
					t.Errorf("README.md:%d: output lacks %q:\n%s", c.Line, p, out)
				}
			}
			if err := readmeOutcome(c, code, out); err != nil {
				t.Errorf("README.md:%d: %s\n%v\nstdout:\n%s", c.Line, c.Text, err, out)
			}
		})
	}
	after := snapshot(t, filepath.Join("results", "bench"))
	for name, data := range committed {
		if !bytes.Equal(after[name], data) {
			t.Errorf("a README command changed results/bench/%s", name)
		}
	}
	if len(after) != len(committed) {
		t.Errorf("a README command added files to results/bench: %d files, were %d", len(after), len(committed))
	}
}

// readmeOutcome checks what the README says a subcommand does.
func readmeOutcome(c readme.Command, code int, out string) error {
	switch c.Args[0] {
	case "run":
		dir := "out/bench"
		for i := 0; i+1 < len(c.Args); i++ {
			if c.Args[i] == "-out" {
				dir = c.Args[i+1]
			}
		}
		if runs, err := readRuns(filepath.Join(dir, "bench.txt")); err != nil || len(runs) == 0 {
			return fmt.Errorf("run wrote no results to %s/bench.txt: %v", dir, err)
		}
	case "compare":
		if code == 0 && !strings.Contains(out, "ok: no significant regression") {
			return fmt.Errorf("compare exited 0 without saying ok")
		}
	case "smoke":
		if !strings.Contains(out, "ok: every gated metric within budget") {
			return fmt.Errorf("smoke did not pass its gates")
		}
	case "soak":
		i := strings.LastIndex(out, "wrote ")
		if i < 0 {
			return fmt.Errorf("soak names no file it wrote")
		}
		if _, err := os.Stat(strings.TrimSpace(out[i+len("wrote "):])); err != nil {
			return fmt.Errorf("soak: %v", err)
		}
	}
	return nil
}

// snapshot reads every file under dir by relative path.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func restore(t *testing.T, files map[string][]byte, dir string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
