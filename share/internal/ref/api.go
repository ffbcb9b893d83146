package ref

import (
	"slices"
	"sort"
	"strconv"

	"popsim/clock"
	"popsim/model"
	"popsim/share"
)

// ---- acknowledgement ----

// ack applies one partition's acknowledgements atomically.
func (s *sp) ack(now clock.Time, member string, batches []share.AckBatch) (share.ErrorCode, []share.LeaseEvent, []share.Renewal) {
	var tx []chg
	var renewed []share.Renewal
	code := share.None
	for _, ab := range batches {
		if ab.LastOffset < s.start {
			continue
		}
		if code = s.ackOne(now, member, ab, &tx, &renewed); code != share.None {
			break
		}
	}
	if code != share.None {
		s.rollback(tx)
		return code, nil, renewed
	}
	if c := s.persist(tx); c != share.None {
		s.rollback(tx)
		return persisterError(c), nil, renewed
	}
	evs := s.commit(now, tx, false)
	s.advance()
	return share.None, evs, renewed
}

func persisterError(c share.ErrorCode) share.ErrorCode {
	switch c {
	case share.NotCoordinator, share.CoordinatorNotAvailable, share.CoordinatorLoadInProgress:
		return share.CoordinatorNotAvailable
	case share.GroupIDNotFound, share.UnknownTopicOrPartition:
		return c
	case share.FencedLeaderEpoch, share.FencedStateEpoch:
		return share.NotLeaderOrFollower
	}
	return share.UnknownServerError
}

func (s *sp) ackOne(now clock.Time, member string, ab share.AckBatch, tx *[]chg, renewed *[]share.Renewal) share.ErrorCode {
	fl := s.floor(ab.FirstOffset)
	if fl == nil {
		if !(ab.FirstOffset < s.start && ab.LastOffset >= s.start) {
			return share.InvalidRecordState
		}
		if fl = s.floor(s.start); fl == nil {
			return share.InvalidRecordState
		}
	}
	sub := s.within(fl.first, ab.LastOffset)
	if last := sub[len(sub)-1].last; last < ab.FirstOffset || ab.LastOffset > last {
		return share.InvalidRequest
	}
	for _, x := range sub {
		if x.last < s.start {
			continue
		}
		if !x.split {
			if r := s.recs[x.first]; r.member == "" || r.member != member {
				return share.InvalidRecordState
			}
		}
		full := x.first >= ab.FirstOffset && x.last <= ab.LastOffset
		startMoved := x.first < s.start && x.last >= s.start
		if !full || x.split || len(ab.Types) > 1 || startMoved {
			if !x.split {
				if s.recs[x.first].state != share.Acquired {
					return share.InvalidRecordState
				}
				x.split = true
			}
			for off := max(x.first, ab.FirstOffset, s.start); off <= min(x.last, ab.LastOffset); off++ {
				r := s.recs[off]
				if r.state != share.Acquired || r.member != member {
					return share.InvalidRecordState
				}
				t := ab.Types[0]
				if len(ab.Types) > 1 {
					t = ab.Types[off-ab.FirstOffset]
				}
				if t == share.AckRenew {
					s.renew(now, off, renewed)
					continue
				}
				s.move(tx, off, ackState(t), false, endAck(t), false)
			}
			continue
		}
		if s.recs[x.first].state != share.Acquired {
			return share.InvalidRecordState
		}
		for off := x.first; off <= x.last; off++ {
			if ab.Types[0] == share.AckRenew {
				s.renew(now, off, renewed)
			} else {
				s.move(tx, off, ackState(ab.Types[0]), false, endAck(ab.Types[0]), false)
			}
		}
	}
	return share.None
}

func (s *sp) renew(now clock.Time, off int64, renewed *[]share.Renewal) {
	r := s.recs[off]
	r.deadline = now.Add(s.lockDur)
	s.b.stats.Renewals++
	*renewed = append(*renewed, share.Renewal{Lease: r.lease, Group: s.key.group, TopicPartition: s.key.TopicPartition, Offset: off,
		Msg: s.log.msg(off), Member: r.member, Deadline: r.deadline})
}

// release ends a member's share session in this share-partition.
func (s *sp) release(now clock.Time, member string) []share.LeaseEvent {
	dec := s.b.cfg.Bugs.DecrementDeliveryCountOnSessionRelease
	var tx []chg
	for _, x := range s.spans {
		if r := s.recs[x.first]; !x.split && r.state == share.Acquired && r.member == member && x.first < s.start && x.last >= s.start {
			x.split = true
		}
		for off := x.first; off <= x.last; off++ {
			if r := s.recs[off]; r.state == share.Acquired && r.member == member {
				below := off < s.start
				if !x.split {
					below = x.last < s.start
				}
				s.move(&tx, off, share.Available, dec, endOther(share.EndSessionClosed, share.EndSessionClosedAtLimit, share.EndSessionClosedBelowStart, below), below)
			}
		}
	}
	if len(tx) == 0 {
		return nil
	}
	if s.persist(tx) != share.None {
		s.rollback(tx)
		if s.orphans == nil {
			s.orphans = map[string]bool{}
		}
		s.orphans[member] = true
		return nil
	}
	evs := s.commit(now, tx, false)
	s.advance()
	return evs
}

// expire times out every ACQUIRED record whose deadline is <= now; it
// returns the events with their deadlines.
func (s *sp) expire(now clock.Time) ([]share.LeaseEvent, []clock.Time) {
	type due struct {
		off int64
		at  clock.Time
	}
	var dues []due
	for off, r := range s.recs {
		if r.state == share.Acquired && r.deadline <= now {
			dues = append(dues, due{off, r.deadline})
		}
	}
	if len(dues) == 0 {
		return nil, nil
	}
	sort.Slice(dues, func(i, j int) bool {
		if dues[i].at != dues[j].at {
			return dues[i].at < dues[j].at
		}
		return dues[i].off < dues[j].off
	})
	var tx []chg
	var at []clock.Time
	for _, d := range dues {
		x := s.floor(d.off)
		if !x.split && x.first < s.start && x.last >= s.start {
			x.split = true
		}
		below := d.off < s.start
		if !x.split {
			below = x.last < s.start
		}
		s.move(&tx, d.off, share.Available, false, endOther(share.EndLockTimeout, share.EndLockTimeoutAtLimit, share.EndLockTimeoutBelowStart, below), below)
		at = append(at, d.at)
	}
	failed := s.persist(tx) != share.None
	evs := s.commit(now, tx, failed)
	s.advance()
	return evs, at
}

// ---- dead letters ----

func (b *Broker) deadLetter(now clock.Time, k key, off int64, count int32, end share.LeaseEnd) *model.Message {
	gc := b.GroupConfig(k.group)
	if gc.DeadLetterTopic == "" {
		return nil
	}
	ps := b.topics[gc.DeadLetterTopic]
	if ps == nil {
		b.stats.DLQFailures++
		return nil
	}
	c := b.log(k.TopicPartition).recs[off].Clone()
	if !gc.DeadLetterCopyRecord {
		c.Body, c.Keys, c.Tags, c.Properties = nil, "", "", nil
	}
	reason := "delivery-limit"
	if end == share.EndRejected {
		reason = "rejected"
	}
	for _, h := range [][2]string{{share.HeaderDLQGroup, k.group}, {share.HeaderDLQTopic, k.Topic},
		{share.HeaderDLQPartition, strconv.Itoa(int(k.Partition))}, {share.HeaderDLQOffset, strconv.FormatInt(off, 10)},
		{share.HeaderDLQDeliveryCount, strconv.Itoa(int(count))}, {share.HeaderDLQReason, reason}} {
		_ = c.SetProperty(h[0], h[1])
	}
	p := k.Partition % int32(len(ps))
	appendTo(now, ps[p], share.TopicPartition{Topic: gc.DeadLetterTopic, Partition: p}, []*model.Message{c})
	b.stats.DLQCopies++
	return c
}

// ---- loading ----

func (b *Broker) load(g string, tp share.TopicPartition) (*sp, share.ErrorCode) {
	k := key{g, tp}
	if s := b.sps[k]; s != nil {
		return s, share.None
	}
	l, ps := b.log(tp), b.persisted[k]
	if l == nil || ps == nil {
		return nil, share.UnknownTopicOrPartition
	}
	gc := b.GroupConfig(g)
	s := &sp{b: b, key: k, log: l, maxDel: gc.DeliveryCountLimit, maxLocks: int64(gc.PartitionMaxRecordLocks),
		throttle: max(2, (gc.DeliveryCountLimit+1)/2), lockDur: clock.MillisDuration(int64(gc.RecordLockDurationMs)), recs: map[int64]*rec{}}
	b.sps[k] = s
	s.start = ps.start
	if s.start < 0 {
		s.start = l.end()
		if gc.AutoOffsetReset == share.ResetEarliest {
			s.start = l.start
		}
	}
	// Persisted offsets at or above the start become spans of equal
	// (state, count); offsets between them become AVAILABLE spans with
	// count 0, one per produced batch.
	var offs []int64
	for off := range ps.states {
		if off >= s.start {
			offs = append(offs, off)
		}
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	next := s.start
	for i := 0; i < len(offs); {
		j := i
		for j+1 < len(offs) && offs[j+1] == offs[j]+1 && ps.states[offs[j+1]] == ps.states[offs[i]] {
			j++
		}
		s.gap(next, offs[i]-1)
		for off := offs[i]; off <= offs[j]; off++ {
			p := ps.states[off]
			s.recs[off] = &rec{state: p.state, count: p.count}
		}
		s.spans = append(s.spans, &span{first: offs[i], last: offs[j]})
		next = offs[j] + 1
		i = j + 1
	}
	if len(s.spans) == 0 {
		s.end = s.start
		return s, share.None
	}
	s.findNext = true
	s.end = s.lastCached()
	s.advance()
	return s, share.None
}

func (s *sp) gap(first, last int64) {
	for off := first; off <= last; {
		end := last
		if bb, ok := s.log.batchOf(off); ok {
			end = min(last, bb[1])
		}
		for o := off; o <= end; o++ {
			s.recs[o] = &rec{state: share.Available}
		}
		s.spans = append(s.spans, &span{first: off, last: end})
		off = end + 1
	}
}

// ---- requests ----

func validAcks(bs []share.AckBatch, renew bool) bool {
	prev := int64(-1)
	for _, ab := range bs {
		if ab.FirstOffset > ab.LastOffset || ab.FirstOffset < prev || len(ab.Types) == 0 ||
			len(ab.Types) > 1 && ab.LastOffset-ab.FirstOffset+1 != int64(len(ab.Types)) {
			return false
		}
		for _, t := range ab.Types {
			if t < 0 || t > 4 || t == share.AckRenew && !renew {
				return false
			}
		}
		prev = ab.LastOffset
	}
	return true
}

func (b *Broker) acks(now clock.Time, g, m string, renew bool, acks []share.PartitionAcks) ([]share.PartitionError, []share.LeaseEvent, []share.Renewal) {
	var errs []share.PartitionError
	var evs []share.LeaseEvent
	var rns []share.Renewal
	seen := map[share.TopicPartition]bool{}
	renewOK := b.GroupConfig(g).RenewAcknowledgeEnable
	for _, pa := range acks {
		if len(pa.Batches) == 0 {
			continue
		}
		code := share.None
		hasRenew := false
		for _, ab := range pa.Batches {
			hasRenew = hasRenew || slices.Contains(ab.Types, share.AckRenew)
		}
		s := b.sps[key{g, pa.TopicPartition}]
		switch {
		case seen[pa.TopicPartition] || !validAcks(pa.Batches, renew):
			code = share.InvalidRequest
		case !renewOK && hasRenew:
			code = share.InvalidRecordState
		case s == nil:
			code = share.UnknownTopicOrPartition
		default:
			var e []share.LeaseEvent
			var r []share.Renewal
			code, e, r = s.ack(now, m, pa.Batches)
			evs = append(evs, e...)
			rns = append(rns, r...)
		}
		seen[pa.TopicPartition] = true
		errs = append(errs, share.PartitionError{TopicPartition: pa.TopicPartition, Err: code})
	}
	if len(errs) > 0 {
		b.stats.Acknowledges++
	}
	return errs, evs, rns
}

func next(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// ShareFetch is the ShareFetch request.
func (b *Broker) ShareFetch(now clock.Time, req share.ShareFetchRequest) share.ShareFetchResult {
	b.stats.Fetches++
	res := share.ShareFetchResult{AcquisitionLockTimeoutMs: b.GroupConfig(req.GroupID).RecordLockDurationMs}
	if req.GroupID == "" || req.MemberID == "" || req.MaxRecords < 0 || req.IsRenewAck && req.MaxRecords != 0 {
		res.Err = share.InvalidRequest
		return res
	}
	k := skey{req.GroupID, req.MemberID}
	epoch, open := b.sessions[k]
	anyAcks := false
	for _, pa := range req.Acks {
		anyAcks = anyAcks || len(pa.Batches) > 0
	}
	switch req.ShareSessionEpoch {
	case -1:
		switch {
		case len(req.Partitions) > 0:
			res.Err = share.InvalidRequest
		case !open:
			res.Err = share.ShareSessionNotFound
		}
	case 0:
		delete(b.sessions, k)
		switch {
		case anyAcks:
			res.Err = share.InvalidRequest
			if open {
				b.sessions[k] = epoch // an invalid request changes nothing
			}
		case int32(len(b.sessions)) >= b.cfg.MaxShareSessions:
			res.Err = share.ShareSessionLimitReached
		default:
			b.sessions[k] = 1
		}
	default:
		switch {
		case !open:
			res.Err = share.ShareSessionNotFound
		case epoch != req.ShareSessionEpoch:
			res.Err = share.InvalidShareSessionEpoch
		default:
			b.sessions[k] = next(epoch)
		}
	}
	if res.Err != share.None {
		return res
	}
	res.AckErrors, res.Ended, res.Renewed = b.acks(now, req.GroupID, req.MemberID, req.IsRenewAck, req.Acks)
	if req.ShareSessionEpoch != -1 && !req.IsRenewAck {
		b.fetch(now, req, &res)
	}
	if req.ShareSessionEpoch == -1 {
		res.Ended = append(res.Ended, b.close(now, req.GroupID, req.MemberID)...)
	}
	return res
}

func (b *Broker) fetch(now clock.Time, req share.ShareFetchRequest, res *share.ShareFetchResult) {
	var parts []share.TopicPartition
	for _, tp := range req.Partitions {
		if !slices.Contains(parts, tp) {
			parts = append(parts, tp)
		}
	}
	if e := req.ShareSessionEpoch; e >= 1 && len(parts) > 1 {
		r := int(e % int32(len(parts)))
		parts = append(slices.Clone(parts[r:]), parts[:r]...)
	}
	batch := int64(req.BatchSize)
	if batch <= 0 {
		batch = int64(req.MaxRecords)
	}
	batch = max(batch, 1)
	remaining := int64(req.MaxRecords)
	for _, tp := range parts {
		pf := share.PartitionFetch{TopicPartition: tp}
		s, code := b.load(req.GroupID, tp)
		if code != share.None {
			pf.Err = code
			res.Partitions = append(res.Partitions, pf)
			continue
		}
		o := &out{now: now, member: req.MemberID}
		if remaining > 0 && s.canAcquire() {
			off := s.next()
			if off < s.log.start {
				s.toLogStart(s.log.start)
			} else if off < s.log.end() {
				remaining -= s.acquire(o, req.AcquireMode, batch, remaining, off)
			}
		} else if remaining > 0 && s.end+1 < s.log.end() {
			b.stats.LockLimited++
		}
		pf.Acquired = o.ranges
		res.Deliveries = append(res.Deliveries, o.deliveries...)
		res.Partitions = append(res.Partitions, pf)
	}
}

func (b *Broker) close(now clock.Time, g, m string) []share.LeaseEvent {
	delete(b.sessions, skey{g, m})
	var evs []share.LeaseEvent
	for _, k := range b.spKeys() {
		if k.group == g {
			evs = append(evs, b.sps[k].release(now, m)...)
		}
	}
	return evs
}

// ShareAcknowledge is the ShareAcknowledge request.
func (b *Broker) ShareAcknowledge(now clock.Time, req share.ShareAcknowledgeRequest) share.ShareAcknowledgeResult {
	res := share.ShareAcknowledgeResult{AcquisitionLockTimeoutMs: b.GroupConfig(req.GroupID).RecordLockDurationMs}
	k := skey{req.GroupID, req.MemberID}
	epoch, open := b.sessions[k]
	switch {
	case req.GroupID == "" || req.MemberID == "":
		res.Err = share.InvalidRequest
	case req.ShareSessionEpoch == 0:
		res.Err = share.InvalidShareSessionEpoch
	case !open:
		res.Err = share.ShareSessionNotFound
	case req.ShareSessionEpoch != -1 && epoch != req.ShareSessionEpoch:
		res.Err = share.InvalidShareSessionEpoch
	}
	if res.Err != share.None {
		return res
	}
	if req.ShareSessionEpoch != -1 {
		b.sessions[k] = next(epoch)
	}
	res.Partitions, res.Ended, res.Renewed = b.acks(now, req.GroupID, req.MemberID, req.IsRenewAck, req.Acks)
	if req.ShareSessionEpoch == -1 {
		res.Ended = append(res.Ended, b.close(now, req.GroupID, req.MemberID)...)
	}
	return res
}

// CloseSession is the member's connection closing.
func (b *Broker) CloseSession(now clock.Time, g, m string) share.SessionCloseResult {
	if _, ok := b.sessions[skey{g, m}]; !ok {
		return share.SessionCloseResult{Err: share.ShareSessionNotFound}
	}
	return share.SessionCloseResult{Ended: b.close(now, g, m)}
}

// Tick expires locks and members.
func (b *Broker) Tick(now clock.Time) share.TickResult {
	var res share.TickResult
	type timed struct {
		e  share.LeaseEvent
		at clock.Time
	}
	var all []timed
	for _, k := range b.spKeys() {
		evs, at := b.sps[k].expire(now)
		for i := range evs {
			all = append(all, timed{evs[i], at[i]})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at < all[j].at })
	for _, t := range all {
		res.Ended = append(res.Ended, t.e)
	}
	for _, gid := range sortedKeys(b.groups) {
		g := b.groups[gid]
		for _, id := range sortedKeys(g.members) {
			if g.members[id].deadline <= now {
				res.Expired = append(res.Expired, share.MemberExpiry{Group: gid, Member: id, At: now})
				b.remove(gid, g, id)
				b.stats.MembersExpired++
			}
		}
	}
	return res
}

// Restart drops everything in memory.
func (b *Broker) Restart(now clock.Time) share.RestartResult {
	var res share.RestartResult
	for _, k := range b.spKeys() {
		s := b.sps[k]
		ps := b.persisted[k]
		var offs []int64
		for off, r := range s.recs {
			if r.state == share.Acquired {
				offs = append(offs, off)
			}
		}
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		for _, off := range offs {
			r := s.recs[off]
			e := share.LeaseEvent{Lease: r.lease, Group: k.group, TopicPartition: k.TopicPartition, Offset: off, Msg: s.log.msg(off),
				Member: r.member, End: share.EndLostAtRestart, State: share.Available, At: now}
			if p, ok := ps.states[off]; ok {
				e.State, e.DeliveryCount = p.state, p.count
			}
			if ps.start >= 0 && off < ps.start {
				e.State, e.DeliveryCount = share.Archived, 0
			}
			res.Lost = append(res.Lost, e)
		}
	}
	res.Sessions = len(b.sessions)
	b.stats.LostLeases += int64(len(res.Lost))
	b.stats.Restarts++
	b.sps = map[key]*sp{}
	b.sessions = map[skey]int32{}
	for gid, g := range b.groups {
		gc := b.GroupConfig(gid)
		for _, m := range g.members {
			m.deadline = now.Add(clock.MillisDuration(int64(gc.SessionTimeoutMs)))
		}
	}
	return res
}

// ---- inspection ----

// Records returns a share-partition's cached records.
func (b *Broker) Records(g string, tp share.TopicPartition) []share.RecordInfo {
	s := b.sps[key{g, tp}]
	if s == nil {
		return nil
	}
	var out []share.RecordInfo
	for _, x := range s.spans {
		for off := x.first; off <= x.last; off++ {
			r := s.recs[off]
			out = append(out, share.RecordInfo{Offset: off, State: r.state, DeliveryCount: r.count, Member: r.member, Lease: r.lease, Deadline: r.deadline})
		}
	}
	return out
}

// Batches returns the cached spans.
func (b *Broker) Batches(g string, tp share.TopicPartition) []share.CachedBatch {
	s := b.sps[key{g, tp}]
	if s == nil {
		return nil
	}
	out := make([]share.CachedBatch, len(s.spans))
	for i, x := range s.spans {
		out[i] = share.CachedBatch{FirstOffset: x.first, LastOffset: x.last, PerOffset: x.split}
	}
	return out
}

// State describes every share-partition.
func (b *Broker) State() []share.SharePartitionState {
	var keys []key
	for k := range b.persisted {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return less(keys[i], keys[j]) })
	out := make([]share.SharePartitionState, 0, len(keys))
	for _, k := range keys {
		out = append(out, b.state(k))
	}
	return out
}

func (b *Broker) state(k key) share.SharePartitionState {
	ps, l := b.persisted[k], b.log(k.TopicPartition)
	st := share.SharePartitionState{Group: k.group, TopicPartition: k.TopicPartition, LogStartOffset: l.start, LogEndOffset: l.end(),
		PersistedStartOffset: ps.start, PersistedStateEpoch: ps.epoch}
	var offs []int64
	for off := range ps.states {
		offs = append(offs, off)
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	for _, off := range offs {
		p := ps.states[off]
		if n := len(st.PersistedBatches); n > 0 {
			lb := &st.PersistedBatches[n-1]
			if lb.LastOffset+1 == off && lb.State == p.state && lb.DeliveryCount == p.count {
				lb.LastOffset = off
				continue
			}
		}
		st.PersistedBatches = append(st.PersistedBatches, share.PersistedBatch{FirstOffset: off, LastOffset: off, State: p.state, DeliveryCount: p.count})
	}
	s := b.sps[k]
	if s == nil {
		return st
	}
	st.Loaded = true
	st.SPSO, st.SPEO, st.Window = s.start, s.end, s.inflight()
	saved := s.findNext
	st.NextFetchOffset = s.next()
	s.findNext = saved
	for off, r := range s.recs {
		switch {
		case r.state == share.Acquired && off < s.start:
			st.AcquiredBelowStart++
		case off < s.start:
		case r.state == share.Available:
			st.Available++
		case r.state == share.Acquired:
			st.Acquired++
		case r.state == share.Acknowledged:
			st.Acknowledged++
		default:
			st.Archived++
		}
	}
	st.Quiescent = s.start >= l.end() && st.Acquired == 0 && st.AcquiredBelowStart == 0
	return st
}
