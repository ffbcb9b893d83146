package ref

import (
	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// Revive is one pass of the KV revive loop (docs/rocketmq/kv-path.md §10): the stored records
// with cursor-3000 <= vt < now-50, in key order, at most one page, are taken
// out and revived; failures come back with backoff.
func (b *Broker) Revive(now clock.Time) pop.ReviveResult {
	b.touch(now.Millis())
	lower, upper := b.reviveCursor-3000, now.Millis()-50
	res := pop.ReviveResult{Lower: clock.FromMillis(lower), Upper: clock.FromMillis(upper)}
	var due, kept []pop.LeasedRecord
	for _, r := range b.store {
		if vt := r.Record.VisibilityTimeout(); vt >= lower && vt < upper {
			due = append(due, r)
		}
	}
	sortByKey(due)
	page := b.cfg.PopReviveMaxReturnSizePerRead
	if len(due) > page {
		due = due[:page]
	}
	for _, r := range b.store {
		if !containsKey(due, &r.Record) {
			kept = append(kept, r)
		}
	}
	b.store = kept
	b.stats.RecordReads += int64(len(due))
	b.stats.RecordDeletes += int64(len(due))
	res.FullPage = len(due) >= page
	b.failed, b.pullWakes = nil, nil
	for _, r := range due {
		rv, woken := b.revive(now, r)
		res.Revivals = append(res.Revivals, b.backoff(now, r, rv))
		res.Woken = append(res.Woken, woken...)
	}
	b.reviveCursor = upper
	if len(due) > 0 {
		b.reviveCursor = due[len(due)-1].Record.VisibilityTimeout()
	}
	res.Failures, res.PullWoken = b.failed, b.pullWakes
	return res
}

func containsKey(rs []pop.LeasedRecord, r *model.PopConsumerRecord) bool {
	for i := range rs {
		if sameKey(&rs[i].Record, r) {
			return true
		}
	}
	return false
}

// revive reads the record's message and writes its retry copy (docs/rocketmq/kv-path.md §10.4).
// A message that is gone is skipped (success); a failed write is
// ReviveRetried, for backoff to settle.
func (b *Broker) revive(now clock.Time, lr pop.LeasedRecord) (pop.Revival, []pop.Wakeup) {
	r := lr.Record
	rv := pop.Revival{Lease: lr.Lease, Record: r, Deadline: clock.FromMillis(r.VisibilityTimeout())}
	k := keyOf(&r)
	var orig *model.Message
	if q := b.queue(r.TopicID, r.QueueID); q != nil {
		orig = q.at(r.Offset)
	}
	b.stats.ReadCalls++
	if orig == nil {
		rv.Outcome = pop.ReviveSkipped
		b.stats.ReviveSkipped++
		b.settled(k, r.Offset)
		return rv, nil
	}
	b.stats.ReadMessages++
	rv.Msg, rv.UniqKey, rv.ReconsumeTimes = orig.ID, orig.UniqKey, orig.ReconsumeTimes
	b.stats.RetryPuts++
	cp := orig.Clone()
	cp.Topic = r.TopicID
	if !model.IsRetryTopic(r.TopicID) {
		cp.Topic = model.RetryTopic(r.GroupID, r.TopicID, b.cfg.EnableRetryTopicV2)
	}
	cp.QueueID = 0
	if orig.ReconsumeTimes == 0 || orig.FirstPopTime == 0 {
		cp.FirstPopTime = r.PopTime
	}
	cp.ReconsumeTimes = orig.ReconsumeTimes + 1
	b.retryTopic(cp.Topic, r.GroupID)
	if f, ok := b.write(now, cp); !ok {
		rv.Outcome = pop.ReviveRetried
		b.failed = append(b.failed, f)
		return rv, nil
	}
	rv.Outcome, rv.Copy, rv.CopyReconsumeTimes = pop.Revived, pop.Location{Topic: cp.Topic, QueueID: cp.QueueID, Offset: cp.QueueOffset}, cp.ReconsumeTimes
	b.stats.Revived++
	b.settled(k, r.Offset)
	b.pullWakes = append(b.pullWakes, b.pullArrived(now, cp)...)
	return rv, b.arrived(cp, r.GroupID)
}

// retryTopic creates a retry topic when missing (1 queue, RW) and commits
// offset 0 on it for the group when it has no offset.
func (b *Broker) retryTopic(name, group string) {
	if b.topics[name] == nil {
		_ = b.CreateTopic(pop.TopicConfig{Name: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: pop.PermRead | pop.PermWrite})
	}
	k := qk{group, name, 0}
	if _, ok := b.commit[k]; !ok {
		b.commit[k] = 0
	}
}

// backoff settles a failed revive: a new record with a longer invisible
// time (popTime now, attemptTimes+1), or a drop after
// popReviveMaxAttemptTimes attempts.
func (b *Broker) backoff(now clock.Time, lr pop.LeasedRecord, rv pop.Revival) pop.Revival {
	r := lr.Record
	if rv.Outcome != pop.ReviveRetried {
		return rv
	}
	b.stats.ReviveFailed++
	if r.AttemptTimes >= b.cfg.PopReviveMaxAttemptTimes {
		return b.drop(r, rv)
	}
	i := min(int(r.AttemptTimes), len(pop.ReviveIntervalsSeconds)-1)
	n := r
	n.InvisibleTime = r.InvisibleTime + 1000*pop.ReviveIntervalsSeconds[i]
	n.PopTime = now.Millis()
	n.AttemptTimes++
	nl := b.grant(n)
	rv.Replaced = b.storePut(nl)
	rv.NewLease, rv.NextDeadline = nl.Lease, clock.FromMillis(n.VisibilityTimeout())
	return rv
}

// drop gives up on a record: "message may be lost".
func (b *Broker) drop(r model.PopConsumerRecord, rv pop.Revival) pop.Revival {
	rv.Outcome = pop.ReviveDropped
	b.stats.MayBeLost++
	b.settled(keyOf(&r), r.Offset)
	return rv
}
