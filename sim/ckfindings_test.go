package sim

// Findings: counterexamples the checkpoint-path property found that are
// RocketMQ's own behaviour, not the engine's or the simulator's mistakes.
// Each is kept under testdata/findings/ (a rapid fail file, outside the
// property's replay directory) and replayed here with what the checker
// must say about it, so that a change to the engine or the checker that
// hides it fails.

import (
	"path/filepath"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"popsim/pop"
	"popsim/sim/check"
)

// replayFinding draws the case a fail file records and runs it.
func replayFinding(t *testing.T, file string, g genOpts) (*propCase, *Result) {
	t.Helper()
	return replayFailFile(t, filepath.Join("testdata", "findings", file), "TestPropAtLeastOnceCheckpoint", g)
}

// replayFailFile is replayFinding for any fail file of property test name.
func replayFailFile(t *testing.T, path, name string, g genOpts) (*propCase, *Result) {
	t.Helper()
	withRapidFlags(t, "rapid.failfile", path, "rapid.checks", "1", "rapid.nofailfile", "true")
	var c *propCase
	rec := &recordingTB{name: name}
	rapid.Check(rec, func(rt *rapid.T) {
		if c == nil {
			c = drawCase(rt, &g)
		}
	})
	if c == nil {
		t.Fatalf("%s drew no case: %v", path, rec.out)
	}
	r, err := RunScheduled(c.knobs.config(c.bugs), c.sched, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c, r
}

// wantWithSwitch checks a finding's replay r of case c: with its bug
// switch on, each of want is among the checker's invariants; fixed (on
// false), the checker reports nothing.
func wantWithSwitch(t *testing.T, on bool, c *propCase, r *Result, want ...string) {
	t.Helper()
	got := invariantsOf(r)
	if !on {
		if len(got) > 0 {
			t.Errorf("fixed: the checker reported %v, want nothing\n%s%s", got, c.describe(), verdict(r))
		}
		return
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("with the switch: the checker reported %v, want %s among them\n%s%s", got, w, c.describe(), verdict(r))
		}
	}
}

// With enablePopBufferMerge (not RocketMQ's default) and
// SameMillisChangeInvisible (upstream's popTime = now), a renewal in its
// pop's millisecond writes a CK with the pop's merge key (topic, group,
// queue, start offset, popTime). A second renewal acks that CK with an ack
// of the same key, which the buffer merges into the pop's buffered CK (its
// bit already set): the first renewal's CK is never acked and revives
// while the second renewal's lease is in flight. The engine answers the
// second renewal with nothing ended, so the checker reports renew-ignored,
// then the unexplained redelivery. Fixed (the default), the renewal's CK
// takes the next free millisecond and the same case passes. (The case is
// from a hunt with same-deadline renewals in every schedule: one auto-
// renewed simple consumer. The earlier one, a 12-step schedule, stopped
// reproducing when the proxy's receives took the broker's clock as their
// born time, which moved its trace.)
func TestSameMillisChangeInvisibleBufferRenewals(t *testing.T) {
	for _, on := range []bool{true, false} {
		c, r := replayFinding(t, "checkpoint-buffer-same-millisecond-renewals.fail",
			genOpts{checkpoint: true, cache: ptr(true), always: families(pfRenewSameDeadline), bugs: pop.Bugs{SameMillisChangeInvisible: on}})
		if !c.knobs.cache || !c.knobs.checkpoint {
			t.Errorf("the case is on the checkpoint path with the buffer: %s", c.knobs.String())
		}
		wantWithSwitch(t, on, c, r, check.InvRenewIgnored, check.InvUnexplained)
	}
}

// After a restart lost a buffered CK, a client still holding the old
// handle renews it: the renewal's CK (popTime now, the message's offset)
// is written at once. A pop of that queue in the same millisecond re-reads
// the offset; with SameMillisChangeInvisible (upstream's popTime = now) its
// buffered CK takes the renewal's merge key, so the buffer merges the
// renewal's later ack into the pop's CK: the engine accepts the ack and
// ends nothing (ack-ignored). Fixed (the default), the pop's CK takes the
// next free millisecond (freeMergeKey) and the same case passes.
func TestSameMillisChangeInvisiblePopAfterRestart(t *testing.T) {
	for _, on := range []bool{true, false} {
		c, r := replayFinding(t, "checkpoint-pop-in-a-renewals-millisecond-after-restart.fail",
			genOpts{checkpoint: true, bugs: pop.Bugs{SameMillisChangeInvisible: on}})
		wantWithSwitch(t, on, c, r, check.InvAckIgnored)
	}
}

// An orderly consumer paused past its lease gets the pop's answer after
// another consumer acked the message and the commit offset moved on. It
// renews the stale handle (at its expiry, long past), then renews the
// handle that renewal returned (same deadline). Upstream
// (FifoChangeBelowCommitEmptyHandle) the first answer has no header
// fields, so the second renewal's handle is not orderly: it writes a CK
// (checkpoint path) or record (KV) for the acked offset, whose revive puts
// the message into the retry topic, which orderly pops never read. The
// retry queue never drains (commit-offset-lag, no-drain); no wakeup was
// owed to the orderly group's parked pops, so missed-wakeup is not among
// the verdicts. Fixed (the default), the handle stays orderly, both
// renewals are no-ops and the cases pass; both are also the orderly
// properties' regression fail files.
func TestFifoChangeBelowCommitEmptyHandle(t *testing.T) {
	orderly := genOpts{orderly: true, maxMessages: 100, reconsume: []string{"0", "0.01", "0.1"}}
	for _, x := range []struct {
		test, name string
		checkpoint bool
	}{
		{"TestPropAtLeastOnceOrderlyCheckpoint", "stale-renewal-below-commit-strands-retry-copy", true},
		{"TestPropAtLeastOnceOrderly", "kv-stale-renewal-below-commit-strands-retry-copy", false},
	} {
		path := filepath.Join("testdata", "rapid", x.test, x.test+"-"+x.name+".fail")
		for _, on := range []bool{true, false} {
			g := orderly
			g.checkpoint, g.bugs = x.checkpoint, pop.Bugs{FifoChangeBelowCommitEmptyHandle: on}
			c, r := replayFailFile(t, path, x.test, g)
			wantWithSwitch(t, on, c, r, check.InvCommitLag, check.InvNoDrain)
			if got := invariantsOf(r); slices.Contains(got, check.InvMissedWakeup) {
				t.Errorf("%s: the checker reported %v: no wakeup is owed for a copy in a retry topic, which orderly pops never read", x.name, got)
			}
		}
	}
}
