package check

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"popsim/model"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected verdicts in testdata/*.txt")

// TestScripts runs every trace in testdata/*.txt through the checker and
// compares its verdict with the text under the trace's "----" line.
//
// A case is
//
//	case <name>
//	<time> <kind> <fields>   one trace event per line, in the text form
//	...                      of model.ParseEvent without the sequence
//	                         number (the runner numbers them, unless the
//	                         line starts with @<seq>); times and dl= take
//	                         any number of decimals
//	finish [not-drained] [lag=<group>/<topic>/<queue>/<n> ...]
//	----
//	<the verdict>
//
// Lines starting with # are comments. `go test ./sim/check -run
// TestScripts -rewrite` regenerates the verdicts, to be reviewed as a diff.
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out, err := runScript(string(src))
			if err != nil {
				t.Fatal(err)
			}
			if *rewrite {
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if out != string(src) {
				t.Errorf("verdicts differ; run with -rewrite and review the diff:\n%s", firstDiff(string(src), out))
			}
		})
	}
}

// runScript checks every case of a script and returns the script with its
// verdicts (re)written.
func runScript(src string) (string, error) { return runScriptWith(src, verdict) }

// runScriptWith is runScript with judge rendering each case's verdict.
func runScriptWith(src string, judge func([]model.Event, Final) string) (string, error) {
	var out strings.Builder
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		out.WriteString(l + "\n")
		if !strings.HasPrefix(l, "case ") {
			continue
		}
		var events []model.Event
		var fin Final
		for i++; i < len(lines) && lines[i] != "----"; i++ {
			l := lines[i]
			out.WriteString(l + "\n")
			switch {
			case strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#"):
			case strings.HasPrefix(l, "finish"):
				f, err := parseFinish(l)
				if err != nil {
					return "", fmt.Errorf("line %d: %v", i+1, err)
				}
				fin = f
			default:
				e, err := parseScriptEvent(l, int64(len(events)))
				if err != nil {
					return "", fmt.Errorf("line %d: %v", i+1, err)
				}
				events = append(events, e)
			}
		}
		out.WriteString("----\n")
		for i+1 < len(lines) && lines[i+1] != "" && !strings.HasPrefix(lines[i+1], "case ") {
			i++ // the old verdict
		}
		out.WriteString(judge(events, fin))
	}
	return out.String(), nil
}

// parseScriptEvent reads "[@<seq>] <time> <kind> <fields>" with loose
// decimals; without @<seq> the event gets the next number.
func parseScriptEvent(l string, seq int64) (model.Event, error) {
	f := strings.Fields(l)
	if len(f) > 0 && strings.HasPrefix(f[0], "@") {
		n, err := strconv.ParseInt(f[0][1:], 10, 64)
		if err != nil {
			return model.Event{}, fmt.Errorf("bad sequence number %q", f[0])
		}
		seq, f = n, f[1:]
	}
	if len(f) < 2 {
		return model.Event{}, fmt.Errorf("want <time> <kind> <fields>: %q", l)
	}
	f[0] = sixDecimals(f[0])
	for i, kv := range f[2:] {
		if v, ok := strings.CutPrefix(kv, "dl="); ok {
			f[2+i] = "dl=" + sixDecimals(v)
		}
	}
	if !slices.ContainsFunc(f[2:], func(s string) bool { return strings.HasPrefix(s, "c=") }) {
		f = append(f, "c=-1")
	}
	return model.ParseEvent(strconv.FormatInt(seq, 10) + " " + strings.Join(f, " "))
}

func sixDecimals(s string) string {
	sec, frac, _ := strings.Cut(s, ".")
	if len(frac) > 6 {
		return s
	}
	return sec + "." + frac + strings.Repeat("0", 6-len(frac))
}

func parseFinish(l string) (Final, error) {
	fin := Final{Drained: true}
	for _, w := range strings.Fields(l)[1:] {
		switch {
		case w == "not-drained":
			fin.Drained = false
		case strings.HasPrefix(w, "lag="):
			p := strings.Split(strings.TrimPrefix(w, "lag="), "/")
			if len(p) != 4 {
				return fin, fmt.Errorf("want lag=<group>/<topic>/<queue>/<n>: %q", w)
			}
			q, err1 := strconv.Atoi(p[2])
			n, err2 := strconv.ParseInt(p[3], 10, 64)
			if err1 != nil || err2 != nil {
				return fin, fmt.Errorf("bad lag %q", w)
			}
			fin.CommitLag = append(fin.CommitLag, QueueLag{Group: p[0], Topic: p[1], Queue: int32(q), Lag: n})
		default:
			return fin, fmt.Errorf("unknown finish option %q", w)
		}
	}
	return fin, nil
}

// verdict runs the checker and renders its report.
func verdict(events []model.Event, fin Final) string {
	c := New(Options{Seed: 42, Replay: "popsim run -seed 42"})
	for i := range events {
		c.Observe(&events[i])
	}
	r := c.Finish(fin)
	var b strings.Builder
	fmt.Fprintf(&b, "produced=%d acked=%d dlq=%d dropped=%d lost=%d deliveries=%d redeliveries=%d duplicates=%d\n",
		r.Produced, r.Acked, r.DLQ, r.Dropped, r.Lost, r.Deliveries, r.Redeliveries, r.Duplicates)
	for _, x := range []struct {
		name string
		m    map[string]int64
	}{{"redelivered", r.RedeliveriesByCause}, {"duplicated", r.DuplicatesByCause}, {"dropped", r.DroppedByPolicy}} {
		if len(x.m) > 0 {
			b.WriteString(x.name + ":")
			for _, k := range slices.Sorted(maps.Keys(x.m)) {
				fmt.Fprintf(&b, " %s=%d", k, x.m[k])
			}
			b.WriteString("\n")
		}
	}
	if r.AckedNotDone > 0 {
		fmt.Fprintf(&b, "acked-not-done=%d\n", r.AckedNotDone)
	}
	if len(r.Groups) > 1 {
		var sum GroupReport
		for _, g := range r.Groups {
			fmt.Fprintf(&b, "group %s: produced=%d acked=%d dlq=%d dropped=%d lost=%d deliveries=%d duplicates=%d\n",
				g.Group, g.Produced, g.Acked, g.DLQ, g.Dropped, g.Lost, g.Deliveries, g.Duplicates)
			sum.Produced, sum.Acked, sum.DLQ, sum.Dropped, sum.Lost = sum.Produced+g.Produced, sum.Acked+g.Acked, sum.DLQ+g.DLQ, sum.Dropped+g.Dropped, sum.Lost+g.Lost
			sum.Deliveries, sum.Duplicates = sum.Deliveries+g.Deliveries, sum.Duplicates+g.Duplicates
		}
		if sum != (GroupReport{Produced: r.Produced, Acked: r.Acked, DLQ: r.DLQ, Dropped: r.Dropped, Lost: r.Lost, Deliveries: r.Deliveries, Duplicates: r.Duplicates}) {
			b.WriteString("GROUPS DO NOT ADD UP\n")
		}
	}
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "violation %s at #%d: %s\n", v.Invariant, v.EventIndex, v.Detail)
	}
	if r.Produced != r.Acked+r.DLQ+r.Dropped+r.Lost {
		b.WriteString("LEDGER DOES NOT BALANCE\n")
	}
	return b.String()
}

// The report's PeakTracked is the most messages held at the end of an
// event, over every event of every script, though the checker takes it
// only at the end of an event that forgot a record or counted a message
// in (endEvent).
func TestPeakTrackedIsPerEventMax(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	cases := 0
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = runScriptWith(string(src), func(events []model.Event, fin Final) string {
			cases++
			c := New(Options{})
			peak := 0
			for i := range events {
				c.Observe(&events[i])
				peak = max(peak, c.Tracked())
			}
			if r := c.Finish(fin); r.PeakTracked != peak {
				t.Errorf("%s, case %d: PeakTracked %d, want %d", path, cases, r.PeakTracked, peak)
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if cases < 50 {
		t.Fatalf("only %d cases", cases)
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, a, b)
		}
	}
	return "(no difference)"
}
