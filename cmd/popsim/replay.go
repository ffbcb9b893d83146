package main

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"popsim/scenarios"
	"popsim/sweep"
)

func (e *env) cmdReplay(args []string) int {
	fs := e.newFlags("replay", "-scenario NAME | -f FILE -seed N [-trace FILE] [-around EVENT_INDEX [-context N]] [-set key=value ...]",
		"Re-runs one seed (normally a failing one, from a violation's replay line) and prints the\n"+
			"message history of each violation; -around prints the trace lines near an event.")
	var src sweep.Source
	force := registerSource(fs, &src)
	var seed seedFlag
	fs.Var(&seed, "seed", "the seed `N` to replay (required)")
	tracePath := fs.String("trace", "", "also write the full trace to `FILE`")
	var around eventFlag
	fs.Var(&around, "around", "print the trace lines around event `EVENT_INDEX` (a violation's event index, >= 0)")
	window := fs.Int64("context", 20, "`N` trace lines before and after -around")
	if code, ok := e.parseNoArgs(fs, args); !ok {
		return code
	}
	if !seed.set {
		return e.badInput("replay: -seed is required (the seed printed with the violation)")
	}
	if *window < 0 || *window > 100000 {
		return e.badInput("replay: -context %d out of range: want 0..100000", *window)
	}
	s, err := src.Load()
	if err != nil {
		return e.badInput("%v", err)
	}
	if err := checkEstimate(s, 1, *force); err != nil {
		return e.badInput("%v", err)
	}
	var win *lineWindow
	var extra io.Writer
	if around.set {
		win = &lineWindow{lo: around.v - *window, hi: around.v + *window}
		extra = win
	}
	o, code := e.runOnce(&src, s, seed.v, *tracePath, extra)
	if o == nil {
		return code
	}
	e.printRun(o)
	e.printHistories(o)
	if win != nil {
		fmt.Fprintf(e.stdout, "\ntrace around event %d:\n", around.v)
		if len(win.lines) == 0 {
			fmt.Fprintf(e.stdout, "  (the run has fewer than %d events)\n", around.v+1)
		}
		for _, l := range win.lines {
			marker := "  "
			if strings.HasPrefix(l, fmt.Sprintf("%d ", around.v)) {
				marker = "> "
			}
			fmt.Fprintf(e.stdout, "%s%s\n", marker, l)
		}
	}
	return e.verdict(o)
}

// eventFlag is an event index flag (>= 0) that remembers whether it was set.
type eventFlag struct {
	v   int64
	set bool
}

func (f *eventFlag) String() string { return strconv.FormatInt(f.v, 10) }
func (f *eventFlag) Set(s string) error {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return fmt.Errorf("want an event index, a whole number >= 0 (a violation's \"at event N\")")
	}
	f.v, f.set = v, true
	return nil
}

func (e *env) printHistories(o *sweep.Outcome) {
	for i, v := range o.Summary.Violations {
		fmt.Fprintf(e.stdout, "\nviolation %d: %s at event %d\n  %s\n", i+1, v.Invariant, v.EventIndex, v.Detail)
		if v.Msg == "" {
			continue
		}
		fmt.Fprintf(e.stdout, "  history of message %s:\n", v.Msg)
		if len(v.History) == 0 {
			fmt.Fprintln(e.stdout, "    (none recorded)")
		}
		for _, h := range v.History {
			fmt.Fprintf(e.stdout, "    %s\n", h)
		}
	}
}

// lineWindow keeps the trace lines whose index is in [lo, hi]. Trace
// lines are written in order, one per event, starting at index 0.
type lineWindow struct {
	lo, hi  int64
	n       int64
	partial []byte
	lines   []string
}

func (w *lineWindow) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if w.n >= w.lo && w.n <= w.hi {
				w.partial = append(w.partial, p...)
			}
			break
		}
		if w.n >= w.lo && w.n <= w.hi {
			w.lines = append(w.lines, string(append(w.partial, p[:i]...)))
		}
		w.partial = w.partial[:0]
		w.n++
		p = p[i+1:]
	}
	return total, nil
}

func (e *env) cmdList(args []string) int {
	fs := e.newFlags("list", "", "Lists the built-in scenarios, one line each.")
	if code, ok := e.parseNoArgs(fs, args); !ok {
		return code
	}
	for _, name := range scenarios.Names() {
		s, err := scenarios.Builtin(name)
		if err != nil {
			fmt.Fprintf(e.stderr, "popsim: built-in scenario %s does not load: %v\n", name, err)
			return exitBadInput
		}
		fmt.Fprintf(e.stdout, "%-20s %s\n", name, s.Summary())
	}
	return exitOK
}

func (e *env) cmdShow(args []string) int {
	fs := e.newFlags("show", "[-effective [-set key=value ...]] NAME",
		"Prints a built-in scenario's file; save it, edit it and run it with popsim run -f FILE.\n"+
			"With -effective it prints the configuration a run uses instead: every key, defaults\n"+
			"filled in, -set overrides applied, each value in its canonical form.")
	effective := fs.Bool("effective", false, "print the effective configuration instead of the file")
	var sets []scenarios.Override
	fs.Func("set", "with -effective, override one scenario key, `key=value` (repeatable)", func(v string) error {
		o, err := scenarios.ParseOverride(v)
		sets = append(sets, o)
		return err
	})
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return e.badInput("show: want exactly one scenario name (popsim list shows them)")
	}
	if !*effective {
		data, err := scenarios.BuiltinText(fs.Arg(0))
		if err != nil {
			return e.badInput("%v", err)
		}
		e.stdout.Write(data)
		return exitOK
	}
	s, err := scenarios.Builtin(fs.Arg(0), sets...)
	if err != nil {
		return e.badInput("%v", err)
	}
	data, err := s.Effective()
	if err != nil {
		return e.badInput("%v", err)
	}
	e.stdout.Write(data)
	return exitOK
}

func (e *env) cmdVersion(args []string) int {
	fs := e.newFlags("version", "", "Prints the module version, the commit it was built from and the Go version.")
	if code, ok := e.parseNoArgs(fs, args); !ok {
		return code
	}
	fmt.Fprintf(e.stdout, "popsim %s\n", buildStamp())
	return exitOK
}

// noCommit says why the commit is unknown and how to get it.
const noCommit = "unknown: this build carries no VCS stamp (go test never stamps; go run and go build " +
	"do only in a git clone, not a git worktree, and not with -buildvcs=false in GOFLAGS). " +
	"In a clone: GOFLAGS=-buildvcs=true go build ./cmd/popsim && ./popsim version. " +
	"results/COMMIT names the commit results/ came from"

// buildStamp is "version V, commit C, go G".
func buildStamp() string {
	version, commit := "(unknown)", noCommit
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if rev := settings["vcs.revision"]; rev != "" {
			commit = rev
			if settings["vcs.modified"] == "true" {
				commit += "+modified"
			}
			if t := settings["vcs.time"]; t != "" {
				commit += " (" + t + ")"
			}
		}
	}
	return fmt.Sprintf("version %s, commit %s, %s", version, commit, runtime.Version())
}
