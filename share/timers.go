package share

import (
	"github.com/tidwall/btree"

	"popsim/clock"
)

// timerKey is one acquisition lock timer: it covers the batch starting at
// first (when the batch is tracked as a whole) or the single offset first
// (when the batch is split), of share-partition sp. At most one live timer
// covers an offset, so (deadline, sp, first) is unique.
type timerKey struct {
	deadline clock.Time
	sp       uint32
	first    int64
}

func timerLess(a, b timerKey) bool {
	if a.deadline != b.deadline {
		return a.deadline < b.deadline
	}
	if a.sp != b.sp {
		return a.sp < b.sp
	}
	return a.first < b.first
}

// timerIndex orders the live lock timers by deadline (Kafka's
// SystemTimer). Cancelling deletes the timer, so every entry is live.
type timerIndex struct {
	bt *btree.BTreeG[timerKey]
}

func (t *timerIndex) init() { t.bt = btree.NewBTreeGOptions(timerLess, btree.Options{NoLocks: true}) }

func (t *timerIndex) add(k timerKey) {
	if _, replaced := t.bt.Set(k); replaced {
		panic("share: internal: duplicate lock timer")
	}
}

func (t *timerIndex) del(k timerKey) {
	if _, ok := t.bt.Delete(k); !ok {
		panic("share: internal: cancelling a lock timer that is not scheduled")
	}
}

func (t *timerIndex) len() int { return t.bt.Len() }

// min returns the earliest timer.
func (t *timerIndex) min() (timerKey, bool) { return t.bt.Min() }

// peekDue returns every timer with deadline <= now, in order, leaving
// them scheduled (the expiry cancels them as any transition does).
func (t *timerIndex) peekDue(now clock.Time) []timerKey {
	var out []timerKey
	t.bt.Scan(func(k timerKey) bool {
		if k.deadline > now {
			return false
		}
		out = append(out, k)
		return true
	})
	return out
}
