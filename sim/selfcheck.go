package sim

import (
	"bytes"
	"fmt"
)

// selfCheckEvery is the checkpoint period of SelfCheck: the running trace
// hash is kept every this many events, so a divergence is found within one
// window without holding the trace.
const selfCheckEvery = 4096

// SelfCheck runs cfg twice in this process and compares the trace hashes.
// On a divergence it re-runs both with the first differing window captured
// and names the first event that differs. Trace, checker and summary
// output are not produced; the error says how to reproduce.
func SelfCheck(cfg Config) error {
	a, err := selfCheckRun(cfg, &capture{every: selfCheckEvery, lo: -1, hi: -1})
	if err != nil {
		return err
	}
	b, err := selfCheckRun(cfg, &capture{every: selfCheckEvery, lo: -1, hi: -1})
	if err != nil {
		return err
	}
	if a.traceHash == b.traceHash && a.dispatched == b.dispatched {
		return nil
	}
	w := firstDivergentWindow(a.checkpoints, b.checkpoints)
	lo, hi := w*selfCheckEvery, (w+1)*selfCheckEvery
	a2, err := selfCheckRun(cfg, &capture{lo: lo, hi: hi})
	if err != nil {
		return err
	}
	b2, err := selfCheckRun(cfg, &capture{lo: lo, hi: hi})
	if err != nil {
		return err
	}
	return divergence(cfg.Seed, a, b, lo, a2.lines, b2.lines)
}

func selfCheckRun(cfg Config, cp *capture) (*capture, error) {
	if _, err := Run(cfg, RunOptions{capture: cp}); err != nil {
		return nil, err
	}
	return cp, nil
}

// firstDivergentWindow is the index of the first checkpoint that differs
// (or the first one only one run reached).
func firstDivergentWindow(a, b [][traceHashSize]byte) int64 {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if !bytes.Equal(a[i][:], b[i][:]) {
			return int64(i)
		}
	}
	return int64(n)
}

func divergence(seed uint64, a, b *capture, lo int64, la, lb []string) error {
	head := fmt.Sprintf("sim: seed %d is not deterministic: trace hashes %s and %s (%d and %d events dispatched)", seed, a.traceHash[:16], b.traceHash[:16], a.dispatched, b.dispatched)
	n := min(len(la), len(lb))
	for i := 0; i < n; i++ {
		if la[i] != lb[i] {
			return fmt.Errorf("%s; first divergent event #%d:\n  run 1: %s\n  run 2: %s", head, lo+int64(i), la[i], lb[i])
		}
	}
	if len(la) != len(lb) {
		return fmt.Errorf("%s; one run's trace ends at event #%d while the other goes on", head, lo+int64(n))
	}
	return fmt.Errorf("%s; the divergent window from event #%d did not reproduce on re-runs (the nondeterminism is not stable across runs)", head, lo)
}
