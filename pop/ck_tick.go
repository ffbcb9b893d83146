package pop

import (
	"math/bits"

	"popsim/clock"
)

// The checkpoint path's periodic work. RocketMQ runs it in threads: the
// timer wheel, PopBufferMergeService (every 5 ms) and one PopReviveService
// per revive queue. popsim runs it when the driver calls CheckpointTick,
// which does everything due up to now in time order (at one instant: the
// timer, then the buffer scan, then the revive services by queue).
// NextCheckpointTick says when the next thing is due; a driver that calls
// CheckpointTick then gets RocketMQ's timing exactly. The broker's clock
// starts at its first call (the services' first round is reviveInterval
// after it).

// CheckpointResult reports one CheckpointTick.
type CheckpointResult struct {
	// Revivals are the leases the revive rounds settled, in order: acked
	// (paired with an ack message), revived (a retry copy written),
	// skipped (the message is gone), retried (re-put as a new lease),
	// dropped or lost. The broker reuses its storage: it is valid until
	// the next CheckpointTick.
	Revivals []Revival
	// Woken are suspended pops the retry copies woke; PullWoken held pulls.
	Woken     []Wakeup
	PullWoken []PullWakeup
	// Failures lists the store writes the faults failed, in order.
	Failures []WriteFailure
	// Buffer is what the buffer scans did; Rounds the revive rounds that
	// finished (the broker reuses its storage: it is valid until the next
	// CheckpointTick).
	Buffer BufferScan
	Rounds []ReviveRound
}

// touch records a call at nowMs: the broker starts at its first call, and
// the timer and the OrderInfo table's flushes are brought up to date. It
// inlines: every pop, ack and put touches, and most find nothing due
// before touchBy (touchDue does the rest).
func (b *Broker) touch(nowMs int64) {
	if nowMs < b.touchBy {
		if invariants {
			b.checkTouchBy(nowMs)
		}
		b.lastNow = max(b.lastNow, nowMs)
		return
	}
	b.touchDue(nowMs)
}

// touchDue is touch once something may be due; it sets touchBy.
func (b *Broker) touchDue(nowMs int64) {
	if nowMs >= b.nextFlush {
		// the offsets a call finds are those of the flush instant: they
		// change only inside calls
		b.offsets.flush()
		b.nextFlush = (nowMs/b.cfg.FlushConsumerOffsetInterval + 1) * b.cfg.FlushConsumerOffsetInterval
	}
	if !b.started {
		b.started, b.startMs = true, nowMs
		b.startServices(nowMs)
		b.startOrder(nowMs)
	}
	b.lastNow = max(b.lastNow, nowMs)
	// the two services are called only when due (checked here, inlined):
	// every pop, ack and put touches, and they are seldom due
	if b.timer.dueBy(nowMs) {
		b.timer.warm(nowMs)
		b.advanceTimer(nowMs)
	}
	o := &b.order
	if o.nextFlush != 0 && nowMs >= o.nextFlush {
		b.flushOrder(nowMs)
	}
	b.touchBy = b.nextFlush
	if o.nextFlush != 0 {
		b.touchBy = min(b.touchBy, o.nextFlush)
	}
	if due, ok := b.nextTimerDue(); ok {
		b.touchBy = min(b.touchBy, due)
	}
}

// checkTouchBy asserts that touch at nowMs, before touchBy, has nothing
// to do but move lastNow.
func (b *Broker) checkTouchBy(nowMs int64) {
	_, due, timed := b.timer.min()
	o := &b.order
	assertf(b.started && nowMs < b.nextFlush && (!timed || nowMs < due) && (o.nextFlush == 0 || nowMs < o.nextFlush),
		"touch at %d before touchBy %d has work (flush %d, timer %v at %d, order flush %d)", nowMs, b.touchBy, b.nextFlush, timed, due, o.nextFlush)
}

// startServices (re)starts the checkpoint path's volatile services at
// startMs.
func (b *Broker) startServices(startMs int64) {
	b.shouldStartTime = startMs - 1 // disappearTimeAfterStart -1
	b.buf.forget()
	b.buf = newCkBuffer(&b.ckl.keys)
	b.buf.lastScan = startMs - BufferScanInterval
	b.revivers, b.svcDirty, b.svcNext = b.newReviveServices(startMs), svcAll, nil
	b.inflight.reset()
	b.ckMessageNumber = 0
}

// fsRunning: popConsumerFSServiceInit starts the buffer's scan and the
// revive services.
func (b *Broker) fsRunning() bool { return b.cfg.PopConsumerFSServiceInit }

// CheckpointTick runs the checkpoint path's periodic work due at or before
// now: timer deliveries, PopBufferMergeService scans (on their 5 ms grid)
// and PopReviveService rounds, in time order.
func (b *Broker) CheckpointTick(now clock.Time) CheckpointResult {
	nowMs := now.Millis()
	b.touch(nowMs)
	var res CheckpointResult
	if !b.fsRunning() {
		return res
	}
	clear(b.scratch.revivals) // the previous tick's, no longer the caller's
	res.Revivals = b.scratch.revivals[:0]
	res.Buffer.Commits = b.scratch.commits[:0]
	res.Rounds = b.scratch.rounds[:0]
	for {
		ts, scan := b.nextScan()
		s, tr := b.nextService()
		switch {
		case scan && ts <= nowMs && (s == nil || ts <= tr):
			b.scanBuffer(ts, &res)
		case s != nil && tr <= nowMs:
			b.stepService(s, tr, &res)
		default:
			b.settleEmptyPulls(nowMs)
			b.scratch.revivals, b.scratch.commits, b.scratch.rounds = res.Revivals, res.Buffer.Commits, res.Rounds
			if len(res.Revivals) == 0 {
				res.Revivals = nil
			}
			if len(res.Buffer.Commits) == 0 {
				res.Buffer.Commits = nil
			}
			if len(res.Rounds) == 0 {
				res.Rounds = nil
			}
			return res
		}
	}
}

// settleEmptyPulls takes, for every reading service, the empty pulls due
// by nowMs: they change nothing but the count of empty pulls, which the
// steps otherwise catch up on lazily. The state is then what pulling every
// ReviveEmptySleep would have left.
func (b *Broker) settleEmptyPulls(nowMs int64) {
	for _, s := range b.revivers {
		if s.pulling && !s.ending && s.due <= nowMs {
			b.forgetNext(s)
			k := (nowMs-s.due)/ReviveEmptySleep + 1
			s.noMsg += k
			s.due += k * ReviveEmptySleep
		}
	}
}

// NextCheckpointTick is when CheckpointTick next has work, false when
// nothing is pending.
//
// The driver asks after every request: the remembered answers of the
// timer's first message and of the next scan are taken inline here, where
// the calls to timerStore.min and nextScan (neither inlines) cost more
// than their answers (default run: 193.6 k calls).
func (b *Broker) NextCheckpointTick() (clock.Time, bool) {
	if !b.started {
		return 0, false
	}
	best, ok, remembered := b.timer.known()
	if !remembered {
		best, ok = b.nextTimerDue()
	}
	if b.fsRunning() {
		from := b.scanFrom()
		t, has, memo := b.buf.work.get(from)
		if !memo || invariants {
			t, has = b.askScan(from, t, has, memo)
		}
		if has && (!ok || t < best) {
			best, ok = t, true
		}
		if s, t := b.nextService(); s != nil && (!ok || t < best) {
			best, ok = t, true
		}
	}
	if !ok {
		return 0, false
	}
	return clock.FromMillis(max(best, b.lastNow)), true
}

// nextScan is the next buffer scan with work: nextBufferWork's answer,
// remembered while the buffer does not change (workMemo), and returned
// before the asking (askScan). NextCheckpointTick takes it the same way,
// inline.
func (b *Broker) nextScan() (int64, bool) {
	from := b.scanFrom()
	at, has, ok := b.buf.work.get(from)
	if ok && !invariants {
		return at, has
	}
	return b.askScan(from, at, has, ok)
}

// scanFrom is the earliest time the next buffer scan can run: the grid
// time at or after both the last scan's next and the broker's clock.
func (b *Broker) scanFrom() int64 {
	return scanGrid(max(b.buf.lastScan+BufferScanInterval, b.lastNow))
}

// askScan is nextScan when the answer is not remembered (or, in the
// invariants build, checked): at, has and ok are the memo's for from.
func (b *Broker) askScan(from, at int64, has, ok bool) (int64, bool) {
	f := b.buf
	if !ok {
		at, has = b.nextBufferWork(from)
		f.work.remember(from, at, has, b.cfg.TimerWheelEnable)
	} else if invariants {
		t, h := b.nextBufferWork(from)
		assertf(t == at && h == has || !h && !has, "buffer: remembered next scan %d (%v) from %d, asking %d (%v)", at, has, from, t, h)
	}
	return at, has
}

// nextService is the revive service with the earliest next step (the lowest
// queue id among equals). The answer is remembered: NextCheckpointTick asks
// after every request, and a request changes one service's next step at
// most (a CK or ack written to its revive queue), mostly not the earliest
// one's. A service whose step was forgotten is asked again and compared
// with the remembered earliest; all are asked when the earliest was. The
// answer with none forgotten, most, is taken inline.
func (b *Broker) nextService() (*reviveService, int64) {
	if b.svcDirty != 0 || invariants {
		b.askServices()
	}
	return b.svcNext, b.svcAt
}

// svcAll is svcDirty when every service is to be asked.
const svcAll = ^uint64(0)

// askServices brings nextService's answer up to date: nextService past
// its inlined case.
func (b *Broker) askServices() {
	if b.svcDirty == svcAll {
		b.svcNext, b.svcAt = b.scanServices()
		b.svcDirty = 0
		return
	}
	for d := b.svcDirty; d != 0; d &= d - 1 {
		s := b.revivers[bits.TrailingZeros64(d)]
		if t := b.nextStepOf(s); t < b.svcAt || t == b.svcAt && s.qid < b.svcNext.qid {
			b.svcNext, b.svcAt = s, t
		}
	}
	b.svcDirty = 0
	if invariants {
		s, t := b.scanServices()
		assertf(s == b.svcNext && t == b.svcAt, "remembered next revive step %p at %d, asking all %p at %d", b.svcNext, b.svcAt, s, t)
	}
}

// scanServices is nextService's answer found by asking every service.
func (b *Broker) scanServices() (*reviveService, int64) {
	var best *reviveService
	var t int64
	for _, s := range b.revivers {
		if n := b.nextStepOf(s); best == nil || n < t {
			best, t = s, n
		}
	}
	return best, t
}
