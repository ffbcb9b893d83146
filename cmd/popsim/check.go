package main

import (
	"errors"
	"fmt"
	"os"

	"popsim/sim"
	"popsim/sim/check"
)

func (e *env) cmdCheck(args []string) int {
	fs := e.newFlags("check", "[-v] TRACE",
		"Checks a saved trace (popsim run -trace FILE writes one) offline with the at-least-once\n"+
			"checker and prints its verdict as run does: the ledger, duplicates by cause and every\n"+
			"violation. Exit 0 when every invariant held, 1 on a violation, 2 when the trace is\n"+
			"malformed (the line that does not read back is named).")
	verbose := fs.Bool("v", false, "print each violation's message history")
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return e.badInput("check: want exactly one trace file, as popsim run -trace FILE writes it")
	}
	path := fs.Arg(0)
	f, err := os.Open(path)
	if err != nil {
		return e.badInput("check: %v", err)
	}
	defer f.Close()
	rep, n, err := sim.CheckTrace(f, check.Options{Replay: "go run ./cmd/popsim check -v " + path})
	var te *sim.TraceError
	switch {
	case errors.As(err, &te):
		return e.badInput("check: %s:%d: %v", path, te.Line, te.Err)
	case err != nil:
		return e.badInput("check: reading %s: %v", path, err)
	}
	w := e.stdout
	fmt.Fprintf(w, "popsim: checked %s: %d events\n", path, n)
	fmt.Fprintf(w, "\n%-22s %d produced, %d acked, %d to DLQ, %d dropped by policy, %d lost\n", "messages", rep.Produced, rep.Acked, rep.DLQ, rep.Dropped, rep.Lost)
	fmt.Fprintf(w, "%-22s %d deliveries, %d duplicates (%.3f%% of produced)%s\n", "deliveries", rep.Deliveries, rep.Duplicates, pct(rep.Duplicates, rep.Produced), counts(rep.DuplicatesByCause))
	if len(rep.DroppedByPolicy) > 0 {
		fmt.Fprintf(w, "%-22s%s\n", "dropped by policy", counts(rep.DroppedByPolicy))
	}
	printNotDone(w, rep.AckedNotDone, rep.Produced)
	fmt.Fprintln(w)
	if len(rep.Violations) == 0 {
		fmt.Fprintln(w, "PASS: every invariant held")
		return exitOK
	}
	fmt.Fprintf(w, "FAIL: %d violation(s)", len(rep.Violations))
	if n := sum(rep.Suppressed); n > 0 {
		fmt.Fprintf(w, " (and %d more not kept:%s)", n, counts(rep.Suppressed))
	}
	fmt.Fprintln(w)
	for _, v := range rep.Violations {
		fmt.Fprintf(w, "  %s at event %d", v.Invariant, v.EventIndex)
		if v.Msg != "" {
			fmt.Fprintf(w, " (%s)", v.Msg)
		}
		fmt.Fprintf(w, ": %s\n", v.Detail)
		if *verbose {
			for _, h := range v.History {
				fmt.Fprintf(w, "      %s\n", h)
			}
		}
	}
	if !*verbose {
		fmt.Fprintf(w, "each violation's message history: go run ./cmd/popsim check -v %s\n", path)
	}
	return exitViolation
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m { // summing only
		n += v
	}
	return n
}
