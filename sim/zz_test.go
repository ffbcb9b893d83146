package sim

import (
	"os"
	"testing"

	"pgregory.net/rapid"
)

func TestZZRepro(t *testing.T) {
	done := false
	rapid.Check(t, func(rt *rapid.T) {
		c := drawCase(rt, &genOpts{})
		if done {
			return
		}
		done = true
		f, _ := os.Create("/tmp/repro.trace")
		defer f.Close()
		r, err := RunScheduled(c.knobs.config(c.bugs), c.sched, RunOptions{TraceWriter: f})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s\nviolations %d", c.describe(), len(r.Summary.Violations))
		for _, v := range r.Summary.Violations {
			t.Logf("%s #%d: %s", v.Invariant, v.EventIndex, v.Detail)
		}
	})
}
