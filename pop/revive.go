package pop

import (
	"popsim/clock"
	"popsim/model"
)

// ReviveOutcome is what happened to one expired record.
type ReviveOutcome uint8

// Revive outcomes.
const (
	// Revived: a retry copy was written; the consumer will see the message again.
	Revived ReviveOutcome = iota
	// ReviveSkipped: the original message is gone (retention); counted as success.
	ReviveSkipped
	// ReviveRetried: the retry write failed; a new record with the backoff
	// interval and attemptTimes+1 replaces the old one.
	ReviveRetried
	// ReviveDropped: the write failed popReviveMaxAttemptTimes times and the
	// record was dropped: RocketMQ logs "message may be lost".
	ReviveDropped
)

func (o ReviveOutcome) String() string {
	return [...]string{"revived", "skipped", "retried", "dropped"}[o]
}

// Revival is the fate of one record.
type Revival struct {
	Record  model.PopConsumerRecord
	Outcome ReviveOutcome
	// Copy is the retry message written (Revived only); its Topic and
	// QueueOffset locate it.
	Copy *model.Message
	// NextVisibilityTimeout is the new record's deadline (ReviveRetried only).
	NextVisibilityTimeout int64
	woken                 []Wakeup
}

// ReviveResult reports one pass of the revive loop.
type ReviveResult struct {
	Lower, Upper int64 // the scanned window [Lower, Upper) in ms
	Revivals     []Revival
	// FullPage means the page filled: RocketMQ runs the next pass at once
	// instead of sleeping ReviveIdleInterval.
	FullPage bool
	Woken    []Wakeup
}

// Revive is one iteration of PopConsumerService's revive loop: it takes the
// records with cursor-3000 <= visibilityTimeout < now-50 (at most
// popReviveMaxReturnSizePerRead, in key order) out of the store, writes each
// message's retry copy, re-inserts failures with backoff, and moves the
// cursor. It also drops lock entries older than the lock timeout once a
// minute, as the loop does.
func (b *Broker) Revive(now clock.Time) ReviveResult {
	nowMs := now.Millis()
	res := ReviveResult{Lower: b.reviveCursor - reviveLookBack, Upper: nowMs - reviveUpperSlack}
	page := b.cfg.PopReviveMaxReturnSizePerRead
	recs := b.index.scanExpired(res.Lower, res.Upper, page, nil)
	res.FullPage = len(recs) >= page
	for _, r := range recs {
		rv := b.settleFailure(now, r, b.reviveRecord(now, r))
		res.Revivals = append(res.Revivals, rv)
		res.Woken = append(res.Woken, rv.woken...)
	}
	b.reviveCursor = res.Upper
	if len(recs) > 0 {
		b.reviveCursor = recs[len(recs)-1].vt
	}
	if nowMs-b.lastLockScan >= LockCleanInterval {
		b.removeTimeoutLocks(nowMs)
	}
	return res
}

// reviveRecord reads the record's message and writes its retry copy.
func (b *Broker) reviveRecord(now clock.Time, r rec) Revival {
	rv := Revival{Record: b.index.record(&r)}
	p := b.names.pairs[r.pair]
	orig := b.Message(p.topic, r.qid, r.offset)
	if orig == nil {
		rv.Outcome = ReviveSkipped
		b.stats.ReviveSkipped++
		b.windowDone(qkey{r.pair, r.qid}, r.offset)
		return rv
	}
	cp := b.retryCopy(orig, p.group, p.topic, r.popTime())
	if _, ok := b.append(now, cp); !ok {
		rv.Outcome = ReviveRetried
		return rv
	}
	rv.Outcome, rv.Copy = Revived, cp
	b.stats.Revived++
	b.windowDone(qkey{r.pair, r.qid}, r.offset)
	rv.woken = b.notifyArrival(now.Millis(), cp, p.group)
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
	b.index.put(n)
	rv.NextVisibilityTimeout = n.vt
	return rv
}

// retryCopy builds the message written to the retry topic (spec 4.2).
func (b *Broker) retryCopy(orig *model.Message, group, recTopic string, popTime int64) *model.Message {
	cp := orig.Clone()
	cp.Topic = recTopic
	if !model.IsRetryTopic(recTopic) {
		cp.Topic = model.RetryTopic(group, recTopic, b.cfg.EnableRetryTopicV2)
	}
	cp.QueueID = 0
	if orig.ReconsumeTimes == 0 || orig.FirstPopTime == 0 {
		cp.FirstPopTime = popTime
	}
	cp.ReconsumeTimes = orig.ReconsumeTimes + 1
	b.ensureRetryTopic(cp.Topic, group)
	return cp
}

// ensureRetryTopic auto-creates a retry topic (1 read / 1 write queue, RW)
// and sets the group's commit offset on queue 0 to 0 when absent.
func (b *Broker) ensureRetryTopic(name, group string) {
	if _, ok := b.topics[name]; !ok {
		_ = b.CreateTopic(TopicConfig{Name: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: PermRead | PermWrite})
	}
	s := b.offsets.at(qkey{b.names.pair(group, name), 0})
	if s.has&hasCommit == 0 {
		s.setCommit(0)
	}
}

// lockTimedOut is PopConsumerLockService.isLockTimeout: the group@topic entry
// is absent or older than the lock timeout.
func (b *Broker) lockTimedOut(group, topicName string, nowMs int64) bool {
	id, ok := b.names.lookup(group, topicName)
	if !ok {
		return true
	}
	t, ok := b.locks[id]
	return !ok || nowMs-t > b.cfg.PopConsumerLockTimeout
}

func (b *Broker) removeTimeoutLocks(nowMs int64) {
	b.lastLockScan = nowMs
	for id, t := range b.locks { // deletion only: order does not matter
		if nowMs-t > b.cfg.PopConsumerLockTimeout {
			delete(b.locks, id)
		}
	}
}
