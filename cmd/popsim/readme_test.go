package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"popsim/internal/readme"
	"popsim/report"
	"popsim/scenarios"
	"popsim/sweep"
)

// TestREADME runs every `go run ./cmd/popsim ...` line of README.md's sh
// blocks, in order, in one scratch folder, through the in-process command
// (internal/readme describes the extraction and the [CI: ...], [exit N]
// and [prints: ...] markers). Besides the exit status and the marked
// texts it checks what the README says each subcommand does.
func TestREADME(t *testing.T) {
	cmds, err := readme.File("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var mine []readme.Command
	for _, c := range cmds {
		if c.Prog == "popsim" {
			mine = append(mine, c)
		} else if c.Prog != "popbench" {
			t.Errorf("README.md:%d: go run ./cmd/%s: no such command", c.Line, c.Prog)
		}
	}
	if len(mine) < 15 {
		t.Fatalf("found %d popsim commands in README.md; the extraction is broken", len(mine))
	}
	t.Chdir(t.TempDir())
	for _, c := range mine {
		t.Run(fmt.Sprintf("line%d", c.Line), func(t *testing.T) {
			code, out, errs := popsim(t, c.Args...)
			if c.Stdout != "" {
				if err := os.WriteFile(c.Stdout, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if code != c.Exit {
				t.Fatalf("README.md:%d: %s\nexit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.Line, c.Text, code, c.Exit, tail(out), tail(errs))
			}
			for _, p := range c.Prints {
				if !strings.Contains(out, p) {
					t.Errorf("README.md:%d: output lacks %q:\n%s", c.Line, p, tail(out))
				}
			}
			if err := readmeOutcome(c, out); err != nil {
				t.Errorf("README.md:%d: %s\n%v\nstdout:\n%s", c.Line, c.Text, err, tail(out))
			}
		})
	}
}

func tail(s string) string {
	if lines := strings.Split(s, "\n"); len(lines) > 40 {
		return "...\n" + strings.Join(lines[len(lines)-40:], "\n")
	}
	return s
}

// flagValue is the last value given to -name, or "".
func flagValue(args []string, name string) string {
	v := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-"+name {
			v = args[i+1]
		}
	}
	return v
}

// answerRE reads a plan's answer line: "answer: consumers=9 (clear at
// 95%)" or "answer: invisible=39s, but 40s is not excluded at 95%".
var answerRE = regexp.MustCompile(`(?m)^answer: ([^=:]+)=([^\s,;]+)(,| \(|;|$)`)

// readmeOutcome checks what the README says a subcommand does.
func readmeOutcome(c readme.Command, out string) error {
	sub := "run"
	if len(c.Args) > 0 && !strings.HasPrefix(c.Args[0], "-") {
		sub = c.Args[0]
	}
	switch sub {
	case "run":
		m := regexp.MustCompile(`(?m)^wrote (\S+) `).FindStringSubmatch(out)
		if m == nil || !sweep.IsRunDir(m[1]) {
			return fmt.Errorf("run wrote no run folder")
		}
		if c.Exit == 0 && !strings.Contains(out, "PASS: every invariant held") {
			return fmt.Errorf("a run that exits 0 must say PASS")
		}
	case "replay":
		if !strings.Contains(out, "violation 1:") || !strings.Contains(out, "history of message") {
			return fmt.Errorf("replay printed no violation with its message history")
		}
		if n := flagValue(c.Args, "around"); n != "" && (!strings.Contains(out, "trace around event "+n+":") || !strings.Contains(out, "\n> "+n+" ")) {
			return fmt.Errorf("-around %s printed no trace around that event", n)
		}
		if p := flagValue(c.Args, "trace"); p != "" {
			if st, err := os.Stat(p); err != nil || st.Size() == 0 {
				return fmt.Errorf("-trace %s: %v", p, err)
			}
		}
	case "check":
		if !strings.Contains(out, "popsim: checked ") || (c.Exit == 0) != strings.Contains(out, "PASS: every invariant held") {
			return fmt.Errorf("check printed no verdict, or one that disagrees with its exit code")
		}
	case "list":
		for _, name := range scenarios.Names() {
			if !strings.Contains(out, name+" ") {
				return fmt.Errorf("list lacks %s", name)
			}
		}
	case "show":
		text, err := scenarios.BuiltinText(c.Args[1])
		if err != nil || out != string(text) {
			return fmt.Errorf("show does not print the built-in file (%v)", err)
		}
	case "sweep", "merge":
		dir := flagValue(c.Args, "out")
		if _, err := os.Stat(filepath.Join(dir, report.ReportFile)); err != nil || !strings.Contains(out, " runs: ") || !strings.Contains(out, "\nIntervals: ") {
			return fmt.Errorf("%s wrote no report in %s (%v)", sub, dir, err)
		}
		if _, inc := sweep.Incomplete(dir); inc {
			return fmt.Errorf("%s left %s marked incomplete", sub, dir)
		}
	case "plan":
		// The answer must be found, with its uncertainty, and above the low
		// end: a plan that answers its lower bound has shown nothing.
		sp, err := sweep.ParseSpace(flagValue(c.Args, "search"))
		if err != nil {
			return err
		}
		m := answerRE.FindStringSubmatch(out)
		if m == nil || m[1] != sp.Name {
			return fmt.Errorf("plan printed no answer for %s", sp.Name)
		}
		if m[2] == sp.Format(sp.Lo) || !strings.Contains(out, sp.Name+"="+sp.Format(sp.Lo)+"  not met") {
			return fmt.Errorf("the answer %s is the low end %s, or the low end was not tried and found wanting", m[2], sp.Format(sp.Lo))
		}
		if !strings.Contains(out, " at 95%") || !strings.Contains(out, "evidence (t intervals over each value's seeds") {
			return fmt.Errorf("plan printed no level or no evidence")
		}
	case "serve":
		if !strings.Contains(out, "serving apache.rocketmq.v2.MessagingService on ") || !strings.Contains(out, "stopped: ") {
			return fmt.Errorf("serve did not say it served and stopped")
		}
	case "version":
		if !strings.Contains(out, "commit") || !strings.Contains(out, "go1.") {
			return fmt.Errorf("version names no commit or Go version")
		}
	}
	return nil
}
