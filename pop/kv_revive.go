package pop

import (
	"popsim/clock"
	"popsim/model"
)

func (o ReviveOutcome) String() string {
	return [...]string{"revived", "skipped", "retried", "dropped", "acked", "lost"}[o]
}

// Revive is one iteration of PopConsumerService's revive loop: it takes the
// records with cursor-3000 <= visibilityTimeout < now-50 (at most
// popReviveMaxReturnSizePerRead, in key order) out of the store, writes each
// message's retry copy, re-inserts failures with backoff, and moves the
// cursor. It also drops lock entries older than the lock timeout once a
// minute, as the loop does.
func (b *Broker) Revive(now clock.Time) ReviveResult {
	b.touch(now.Millis())
	nowMs := now.Millis()
	lower, upper := b.reviveCursor-reviveLookBack, nowMs-reviveUpperSlack
	res := ReviveResult{Lower: clock.FromMillis(lower), Upper: clock.FromMillis(upper)}
	page := b.cfg.PopReviveMaxReturnSizePerRead
	recs := b.index.scanExpired(lower, upper, page, b.scratch.expired[:0])
	b.stats.RecordReads += int64(len(recs))
	b.stats.RecordDeletes += int64(len(recs)) // deleteRecords of the batch
	res.FullPage = len(recs) >= page
	for _, r := range recs {
		rv := b.settleFailure(now, r, b.reviveRecord(now, r))
		res.Revivals = append(res.Revivals, rv)
		res.Woken = append(res.Woken, rv.woken...)
		res.PullWoken = append(res.PullWoken, rv.pullWoken...)
		if rv.failure.failed() {
			res.Failures = append(res.Failures, rv.failure)
		}
	}
	b.reviveCursor = upper
	if len(recs) > 0 {
		b.reviveCursor = recs[len(recs)-1].vt
	}
	// the page's storage is the next Revive's, without references (a
	// record's only one is its attempt id)
	for i := len(recs) - 1; i >= 0; i-- {
		recs[i].attemptID = ""
	}
	b.scratch.expired = recs[:0]
	if nowMs-b.lastLockScan >= LockCleanInterval {
		b.removeTimeoutLocks(nowMs)
	}
	return res
}

// reviveRecord reads the record's message and writes its retry copy.
func (b *Broker) reviveRecord(now clock.Time, r rec) Revival {
	rv := Revival{Lease: r.lease, Record: b.index.record(&r), Deadline: clock.FromMillis(r.vt)}
	p := b.names.pairs[r.pair]
	var orig *model.Message
	if q := b.queue(p.topic, r.qid); q != nil {
		orig = q.at(r.offset)
	}
	b.stats.ReadCalls++
	if orig == nil {
		rv.Outcome = ReviveSkipped
		b.stats.ReviveSkipped++
		return rv
	}
	b.stats.ReadMessages++
	rv.Msg, rv.UniqKey, rv.ReconsumeTimes = orig.ID, orig.UniqKey, orig.ReconsumeTimes
	cp := b.retryCopy(orig, p.group, p.topic, r.popTime())
	b.stats.RetryPuts++
	var fail WriteFailure
	stored := b.append(now, &cp, false, &fail) // orig may be invalid from here
	if stored == nil {
		rv.Outcome, rv.failure = ReviveRetried, fail
		return rv
	}
	rv.Outcome = Revived
	rv.Copy = Location{Topic: stored.Topic, QueueID: stored.QueueID, Offset: stored.QueueOffset}
	rv.CopyReconsumeTimes = stored.ReconsumeTimes
	b.stats.Revived++
	rv.pullWoken = b.notifyPullArrival(now.Millis(), stored)
	rv.woken = b.notifyArrival(nil, now.Millis(), stored, p.group)
	return rv
}

// settleFailure re-inserts a failed record with backoff, or drops it after
// popReviveMaxAttemptTimes attempts.
func (b *Broker) settleFailure(now clock.Time, r rec, rv Revival) Revival {
	if rv.Outcome != ReviveRetried {
		return rv
	}
	b.stats.ReviveFailed++
	if r.attemptTimes >= b.cfg.PopReviveMaxAttemptTimes {
		return b.dropFailed(r, rv)
	}
	i := min(int(r.attemptTimes), len(ReviveIntervalsSeconds)-1)
	n := r
	n.invisible = r.invisible + 1000*ReviveIntervalsSeconds[i]
	n.vt = now.Millis() + n.invisible
	n.attemptTimes++
	n.lease = b.newLease()
	rv.Replaced = b.index.put(n)
	b.stats.RecordPuts++
	rv.NewLease, rv.NextDeadline = n.lease, clock.FromMillis(n.vt)
	return rv
}

// lockTimedOut is PopConsumerLockService.isLockTimeout: the group@topic entry
// is absent or older than the lock timeout.
func (b *Broker) lockTimedOut(group, topicName string, nowMs int64) bool {
	id, ok := b.names.lookup(group, topicName)
	if !ok {
		return true
	}
	if int(id) >= len(b.locks) || !b.locks[id].held {
		return true
	}
	return nowMs-b.locks[id].at > b.cfg.PopConsumerLockTimeout
}

func (b *Broker) removeTimeoutLocks(nowMs int64) {
	b.lastLockScan = nowMs
	for i := range b.locks {
		if l := &b.locks[i]; l.held && nowMs-l.at > b.cfg.PopConsumerLockTimeout {
			*l = popLock{}
		}
	}
}

// popLock is a group@topic pair's entry in PopConsumerLockService's
// table (held: present) with its lockTime, in a slice by pair id: a pop
// sets it, so a map would cost a hashed write per pop.
type popLock struct {
	at   int64
	held bool
}

// setLock writes pair's lock entry at nowMs.
func (b *Broker) setLock(pair uint32, nowMs int64) {
	for int(pair) >= len(b.locks) {
		b.locks = append(b.locks, popLock{})
	}
	b.locks[pair] = popLock{at: nowMs, held: true}
}
