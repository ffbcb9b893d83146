package ref

import (
	"sort"
	"strconv"
	"strings"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// service is one PopReviveService. Unlike the engine it takes every pull
// of a round, every ReviveEmptySleep, one at a time.
type service struct {
	qid              int32
	offset, slow     int64
	pulling, ending  bool
	due              int64
	start, old, read int64
	endTime, firstRt int64
	noMsg            int64
	cks              []*rck // the round's map, in insertion order
	all              []*rck
	mocks            []*rck
	msgs             int
	cut              bool // reviveScanTime ended the round before a pull
}

// rck is a CK a round read.
type rck struct {
	key      string
	ck       model.PopCheckPoint
	ref      *ckRef
	replaced bool
}

func (s *service) find(key string, in []*rck) int {
	for i, c := range in {
		if c.key == key {
			return i
		}
	}
	return -1
}

// CheckpointTick runs the FS path's periodic work due by now.
func (b *Broker) CheckpointTick(now clock.Time) pop.CheckpointResult {
	nowMs := now.Millis()
	b.touch(nowMs)
	var res pop.CheckpointResult
	if !b.cfg.PopConsumerFSServiceInit {
		return res
	}
	for {
		ts, scan := b.scanAt(nowMs)
		var svc *service
		for _, s := range b.ck.services {
			if s.due <= nowMs && (svc == nil || s.due < svc.due) {
				svc = s
			}
		}
		switch {
		case scan && (svc == nil || ts <= svc.due):
			b.scan(ts, &res)
		case svc != nil:
			b.step(svc, svc.due, &res)
		default:
			return res
		}
	}
}

// scanAt is the first scan time with work no later than limit.
func (b *Broker) scanAt(limit int64) (int64, bool) {
	from := max(b.ck.lastScan+pop.BufferScanInterval, b.ck.lastNow)
	if r := from % pop.BufferScanInterval; r != 0 {
		from += pop.BufferScanInterval - r
	}
	if len(b.ck.buffer) == 0 && len(b.ck.commits) == 0 {
		return 0, false
	}
	// the times at which work can start: now, each wrapper's removeCk
	// thresholds and re-put acceptance, and the garbage times
	cands := []int64{from}
	for _, w := range b.ck.buffer {
		cands = append(cands, w.ck.ReviveTime()-b.cfg.PopCkStayBufferTimeOut+1, w.ck.PopTime+b.cfg.PopCkStayBufferTime+1,
			w.ck.ReviveTime()-pop.AckTimeInterval-b.cfg.TimerMaxDelaySec*1000)
	}
	for _, cq := range b.ck.commits {
		cands = append(cands, cq.time+pop.CommitQueueIdle+1)
	}
	var grid []int64
	for _, c := range cands {
		if c < from {
			c = from
		}
		if r := c % pop.BufferScanInterval; r != 0 {
			c += pop.BufferScanInterval - r
		}
		grid = append(grid, c)
		if g := c + (pop.BufferGarbageInterval-c%pop.BufferGarbageInterval)%pop.BufferGarbageInterval; g >= c {
			grid = append(grid, g)
		}
	}
	sort.Slice(grid, func(i, j int) bool { return grid[i] < grid[j] })
	for _, t := range grid {
		if t <= limit && b.scanWork(t) {
			return t, true
		}
	}
	return 0, false
}

// NextCheckpointTick is when CheckpointTick next has something to do.
func (b *Broker) NextCheckpointTick() (clock.Time, bool) {
	if !b.ck.started {
		return 0, false
	}
	best, ok := int64(0), false
	at := func(t int64) {
		if !ok || t < best {
			best, ok = t, true
		}
	}
	for _, h := range b.ck.timer {
		at(h.due)
	}
	if b.cfg.PopConsumerFSServiceInit {
		if t, has := b.scanAt(1 << 62); has {
			at(t)
		}
		for _, s := range b.ck.services {
			at(b.changeAt(s))
		}
	}
	if !ok {
		return 0, false
	}
	return clock.FromMillis(max(best, b.ck.lastNow)), true
}

// changeAt is the first pull (or step) of s that changes anything, found
// by trying the pulls one after the other.
func (b *Broker) changeAt(s *service) int64 {
	if !s.pulling || s.ending {
		return s.due
	}
	q := b.reviveQPeek(s.qid)
	for g, n := s.due, s.noMsg; ; g, n = g+pop.ReviveEmptySleep, n+1 {
		visible := s.read < q.min || s.read < q.max() && q.at(s.read).StoreTimestamp <= g
		for _, h := range b.ck.timer {
			visible = visible || h.msg.QueueID == s.qid && h.due <= g && s.read >= q.max()
		}
		if visible || s.endTime != 0 && g-s.endTime > pop.ReviveEndTimeMove || (n+1)*pop.ReviveEmptySleep > pop.ReviveEmptyGiveUp {
			return g
		}
	}
}

// step takes service s's step at g.
func (b *Broker) step(s *service, g int64, res *pop.CheckpointResult) {
	switch {
	case s.ending:
		b.finish(s, g, res)
	case !s.pulling:
		if !b.cfg.TimerWheelEnable {
			s.due = g + b.cfg.ReviveInterval
			return
		}
		s.pulling, s.start = true, g
		s.old = max(s.offset, b.reviveCommitted(s.qid))
		s.read, s.endTime, s.firstRt, s.noMsg, s.msgs, s.cut = s.old+1, 0, 0, 0, 0, false
		s.cks, s.all, s.mocks = nil, nil, nil
		b.pullAt(s, g, res)
	default:
		b.pullAt(s, g, res)
	}
}

func (b *Broker) pullAt(s *service, g int64, res *pop.CheckpointResult) {
	q := b.reviveQPeek(s.qid)
	for {
		if s.read < q.min {
			b.commit[qk{model.ReviveGroup, b.reviveTopic(), s.qid}] = q.min - 1
			break
		}
		var batch []*model.Message
		for o := s.read; o < q.max() && len(batch) < pop.RevivePullBatch && q.at(o).StoreTimestamp <= g; o++ {
			batch = append(batch, q.at(o))
		}
		if len(batch) == 0 {
			break
		}
		s.noMsg = 0
		if g-s.start > b.cfg.ReviveScanTime {
			s.cut = true
			b.finish(s, g, res)
			return
		}
		for _, m := range batch {
			b.stats.ReviveReads++
			if !b.take(s, g, m) {
				s.pulling, s.ending, s.due = false, false, g+b.cfg.ReviveInterval
				b.stats.ReviveRoundsAborted++
				return
			}
			s.read++
			s.msgs++
		}
	}
	if s.endTime != 0 && g-s.endTime > pop.ReviveEndTimeMove {
		s.endTime = g
	}
	if s.endTime-s.firstRt > pop.ReviveGrace {
		b.finish(s, g, res)
		return
	}
	s.noMsg++
	s.due = g + pop.ReviveEmptySleep
	s.ending = s.noMsg*pop.ReviveEmptySleep > pop.ReviveEmptyGiveUp
}

func deliverOf(m *model.Message) int64 {
	v, _ := m.Property(model.PropertyTimerDeliverMs)
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// take reads one revive-topic message into the round.
func (b *Broker) take(s *service, g int64, m *model.Message) bool {
	switch m.Tags {
	case model.CkTag:
		ck, err := model.ParsePopCheckPoint(m.Body)
		if err != nil {
			return false
		}
		if ck.Topic == "" || ck.CID == "" {
			return true
		}
		ck.ReviveOffset = m.QueueOffset
		v, _ := m.Property(pop.PropertyLease)
		l, _ := strconv.ParseUint(v, 10, 64)
		c := &rck{key: ck.MergeKey(), ck: ck, ref: b.refByLease(model.LeaseID(l))}
		if i := s.find(c.key, s.cks); i >= 0 {
			s.cks[i].replaced = true
			s.cks[i] = c
		} else {
			s.cks = append(s.cks, c)
		}
		s.all = append(s.all, c)
		if s.firstRt == 0 {
			s.firstRt = ck.ReviveTime()
		}
	case model.AckTag, model.BatchAckTag:
		var a model.AckMsg
		var offs []int64
		if m.Tags == model.AckTag {
			x, err := model.ParseAckMsg(m.Body)
			if err != nil {
				return false
			}
			a, offs = x, []int64{x.AckOffset}
		} else {
			x, err := model.ParseBatchAckMsg(m.Body)
			if err != nil {
				return false
			}
			a, offs = x.AckMsg, x.AckOffsetList
		}
		bn := a.BrokerName
		if strings.TrimSpace(bn) == "" {
			bn = b.cfg.BrokerName
		}
		key := model.MergeKey(a.Topic, a.ConsumerGroup, a.QueueID, a.StartOffset, a.PopTime, bn)
		i := s.find(key, s.cks)
		if i < 0 {
			if !b.cfg.EnableSkipLongAwaitingAck {
				return true
			}
			if g-deliverOf(m) > b.cfg.ReviveAckWaitMs {
				mock := &rck{key: key, ck: model.PopCheckPoint{StartOffset: a.StartOffset, PopTime: a.PopTime, QueueID: a.QueueID,
					CID: a.ConsumerGroup, Topic: a.Topic, ReviveOffset: m.QueueOffset, BrokerName: a.BrokerName}}
				if j := s.find(key, s.mocks); j >= 0 {
					s.mocks[j] = mock
				} else {
					s.mocks = append(s.mocks, mock)
				}
				if s.firstRt == 0 {
					s.firstRt = mock.ck.ReviveTime()
				}
			}
		} else {
			for _, o := range offs {
				if x := s.cks[i].ck.IndexOfAck(o); x > -1 {
					s.cks[i].ck.BitMap |= 1 << uint(x)
				}
			}
		}
	}
	if d := deliverOf(m); d > s.endTime {
		s.endTime = d
	}
	return true
}

// finish merges the round and schedules the next one.
func (b *Broker) finish(s *service, g int64, res *pop.CheckpointResult) {
	for _, mk := range s.mocks {
		if i := s.find(mk.key, s.cks); i >= 0 {
			s.cks[i].replaced = true
			s.cks[i] = mk
		} else {
			s.cks = append(s.cks, mk)
		}
	}
	list := append([]*rck(nil), s.cks...)
	sort.SliceStable(list, func(i, j int) bool { return list[i].ck.ReviveOffset < list[j].ck.ReviveOffset })
	newOffset := s.old
	for _, c := range list {
		if s.endTime-c.ck.ReviveTime() <= pop.ReviveGrace {
			break
		}
		_, grp := b.groups[c.ck.CID]
		if !grp || b.topics[model.ParseNormalTopic(c.ck.Topic, c.ck.CID)] == nil {
			b.lose(s, c, g, res)
		} else {
			b.reviveCk(s, c, g, res)
		}
		newOffset = c.ck.ReviveOffset
	}
	for _, c := range s.all {
		if c.replaced && c.ck.ReviveOffset <= newOffset {
			b.lose(s, c, g, res)
		}
	}
	if newOffset > s.old {
		b.commit[qk{model.ReviveGroup, b.reviveTopic(), s.qid}] = newOffset
	}
	s.offset = newOffset
	res.Rounds = append(res.Rounds, pop.ReviveRound{ReviveQueue: s.qid, Start: clock.FromMillis(s.start), End: clock.FromMillis(g),
		OldOffset: s.old, NewOffset: newOffset, Read: s.msgs, Cks: len(list)})
	s.pulling, s.ending = false, false
	if len(list) == 0 {
		s.due = g + s.slow*b.cfg.ReviveInterval + b.cfg.ReviveInterval
		if s.slow < b.cfg.ReviveMaxSlow {
			s.slow++
		}
	} else {
		s.slow, s.due = 1, g+b.cfg.ReviveInterval
	}
	s.cks, s.all, s.mocks = nil, nil, nil
}

func (b *Broker) describe(c *rck, i int, l model.LeaseID) pop.Revival {
	return pop.Revival{Lease: l, Deadline: clock.FromMillis(c.ck.ReviveTime()),
		Record: model.PopConsumerRecord{PopTime: c.ck.PopTime, GroupID: c.ck.CID, TopicID: c.ck.Topic, QueueID: c.ck.QueueID,
			RetryFlag: model.RetryFlagOf(c.ck.Topic), InvisibleTime: c.ck.InvisibleTime, Offset: c.ck.AckOffsetByIndex(i),
			AttemptTimes: int32(c.ck.ParseRePutTimes())}}
}

func leaseAt(r *ckRef, i int) model.LeaseID {
	if r == nil {
		return 0
	}
	return r.lease(i)
}

// unpaired: why lease i of c had an ack message pending that the round
// did not pair, if it had one.
func unpaired(s *service, c *rck, i int, g int64) pop.UnpairedAck {
	switch {
	case c.ref == nil || !c.ref.pending[i]:
		return pop.AckPaired
	case s.cut && c.ref.ackAt <= g:
		return pop.AckCutOff
	}
	return pop.AckMissed
}

func (b *Broker) lose(s *service, c *rck, g int64, res *pop.CheckpointResult) {
	if c.ref == nil || !c.ref.alive {
		return
	}
	for i := range c.ref.ended {
		if l := endLease(c.ref, i); l != 0 {
			rv := b.describe(c, i, l)
			rv.Outcome = pop.ReviveLost
			rv.Unpaired = unpaired(s, c, i, g)
			b.stats.MayBeLost++
			res.Revivals = append(res.Revivals, rv)
		}
	}
	c.ref.alive = false
}

// reviveCk is reviveMsgFromCk.
func (b *Broker) reviveCk(s *service, c *rck, g int64, res *pop.CheckpointResult) {
	type failure struct {
		i    int
		read bool
	}
	var failed []failure
	for i := 0; i < int(c.ck.Num); i++ {
		l := leaseAt(c.ref, i)
		rv := b.describe(c, i, l)
		if c.ck.BitMap&(1<<uint(i)) != 0 {
			if endLease(c.ref, i) != 0 {
				rv.Outcome = pop.ReviveAcked
				b.stats.RevivePaired++
				res.Revivals = append(res.Revivals, rv)
			}
			continue
		}
		rv.Unpaired = unpaired(s, c, i, g)
		b.stats.ReadCalls++
		if b.faults.ReviveReadPPM != 0 {
			b.ck.reads++
			if pop.FaultDraw(b.faults.Seed^0x7265766976657264, b.ck.reads) < b.faults.ReviveReadPPM {
				failed = append(failed, failure{i, true})
				continue
			}
		}
		if c.ck.BrokerName != b.cfg.BrokerName {
			failed = append(failed, failure{i, false})
			continue
		}
		var orig *model.Message
		if q := b.queue(c.ck.Topic, c.ck.QueueID); q != nil {
			orig = q.at(c.ck.AckOffsetByIndex(i))
		}
		if orig == nil {
			endLease(c.ref, i)
			rv.Outcome = pop.ReviveSkipped
			b.stats.ReviveSkipped++
			res.Revivals = append(res.Revivals, rv)
			continue
		}
		b.stats.ReadMessages++
		rv.Msg, rv.UniqKey, rv.ReconsumeTimes = orig.ID, orig.UniqKey, orig.ReconsumeTimes
		cp := orig.Clone()
		cp.Topic = c.ck.Topic
		if !model.IsRetryTopic(c.ck.Topic) {
			cp.Topic = model.BuildPopRetryTopic(c.ck.Topic, c.ck.CID, b.cfg.EnableRetryTopicV2)
		}
		cp.QueueID = 0
		if orig.ReconsumeTimes == 0 || orig.FirstPopTime == 0 {
			cp.FirstPopTime = c.ck.PopTime
		}
		cp.ReconsumeTimes = orig.ReconsumeTimes + 1
		if !b.cfg.Bugs.V1RetryNoPollWake {
			_ = cp.SetProperty(model.PropertyOriginGroup, c.ck.CID)
		}
		b.retryTopic(cp.Topic, c.ck.CID)
		b.stats.RetryPuts++
		if f, ok := b.write(clock.FromMillis(g), cp); !ok {
			b.stats.ReviveFailed++
			res.Failures = append(res.Failures, f)
			failed = append(failed, failure{i, false})
			continue
		}
		rv.Outcome, rv.Copy, rv.CopyReconsumeTimes = pop.Revived, pop.Location{Topic: cp.Topic, QueueID: cp.QueueID, Offset: cp.QueueOffset}, cp.ReconsumeTimes
		b.stats.Revived++
		b.inflightSub(qk{c.ck.CID, c.ck.Topic, c.ck.QueueID}, c.ck.PopTime, 1)
		res.PullWoken = append(res.PullWoken, b.pullArrived(clock.FromMillis(g), cp)...)
		res.Woken = append(res.Woken, b.arrived(cp, c.ck.CID)...)
		endLease(c.ref, i)
		res.Revivals = append(res.Revivals, rv)
	}
	for k, f := range failed {
		if f.read && b.cfg.Bugs.ReviveReadFailureLosesRetry {
			for _, x := range failed[k:] {
				rv := b.describe(c, x.i, leaseAt(c.ref, x.i))
				rv.Unpaired = unpaired(s, c, x.i, g)
				endLease(c.ref, x.i)
				rv.Outcome = pop.ReviveLost
				b.stats.MayBeLost++
				res.Revivals = append(res.Revivals, rv)
			}
			break
		}
		b.rePut(s, c, f.i, g, res)
	}
	if c.ref != nil {
		c.ref.alive = false
	}
}

// rePut is rePutCK for index i.
func (b *Broker) rePut(s *service, c *rck, i int, g int64, res *pop.CheckpointResult) {
	rv := b.describe(c, i, leaseAt(c.ref, i))
	rv.Unpaired = unpaired(s, c, i, g)
	endLease(c.ref, i)
	rp := c.ck.ParseRePutTimes()
	if rp >= len(pop.CkRewriteIntervalsSeconds) && b.cfg.SkipWhenCKRePutReachMaxTimes {
		rv.Outcome = pop.ReviveDropped
		b.stats.MayBeLost++
		res.Revivals = append(res.Revivals, rv)
		return
	}
	ck := model.PopCheckPoint{Num: 1, PopTime: c.ck.PopTime, InvisibleTime: c.ck.InvisibleTime, StartOffset: c.ck.AckOffsetByIndex(i),
		CID: c.ck.CID, Topic: c.ck.Topic, QueueID: c.ck.QueueID, BrokerName: c.ck.BrokerName, QueueOffsetDiff: []int32{0},
		RePutTimes: strconv.Itoa(rp + 1), HasRePutTimes: true}
	if b.cfg.Bugs.RePutCkLosesBrokerName {
		ck.BrokerName = ""
	}
	if c.ck.ReviveTime() <= g {
		ck.InvisibleTime += 1000 * pop.CkRewriteIntervalsSeconds[min(rp, len(pop.CkRewriteIntervalsSeconds)-1)]
	}
	b.stats.CkRePuts++
	if b.writeCk(g, &ck, s.qid, b.lastLease+1, &res.Failures) != 0 {
		rv.Outcome = pop.ReviveDropped
		b.stats.MayBeLost++
		res.Revivals = append(res.Revivals, rv)
		return
	}
	r := b.makeRef(&ck, s.qid)
	r.stored, r.at = true, b.ck.arrival
	rv.Outcome, rv.NewLease, rv.NextDeadline = pop.ReviveRetried, r.first, clock.FromMillis(ck.ReviveTime())
	res.Revivals = append(res.Revivals, rv)
}
