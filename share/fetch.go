package share

import (
	"slices"

	"popsim/clock"
)

// sessionKey names a share session: one per (group, member) on a broker.
type sessionKey struct{ group, member string }

// session is a ShareSession: its epoch is the one the next request must
// carry.
type session struct{ epoch int32 }

// nextEpoch is ShareRequestMetadata.nextEpoch: +1, wrapping to 1.
func nextEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// loadSP returns the share-partition's leader state, loading it from the
// share coordinator's record on first use (SharePartition.maybeInitialize).
func (b *Broker) loadSP(groupID string, tp TopicPartition) (*sharePartition, ErrorCode) {
	k := spKey{groupID, tp}
	if sp := b.sps[k]; sp != nil {
		return sp, None
	}
	l := b.log(tp)
	ps := b.persisted[k]
	if l == nil || ps == nil {
		// No such partition, or no share-group state initialized for it
		// (the group never subscribed to the topic).
		return nil, UnknownTopicOrPartition
	}
	sp := newSharePartition(b, uint32(len(b.spByID)), k, l, b.GroupConfig(groupID))
	b.spByID = append(b.spByID, sp)
	b.sps[k] = sp
	b.spOrder = nil
	sp.start = ps.startOffset
	if sp.start < 0 {
		if b.GroupConfig(groupID).AutoOffsetReset == ResetEarliest {
			sp.start = l.start
		} else {
			sp.start = l.end()
		}
	}
	sp.rebuild(ps)
	return sp, None
}

// rebuild fills the cache from the persisted batches at or above the start
// offset. Offsets between them that were never written (acquired, then
// lost) come back as AVAILABLE with delivery count 0, one cached batch per
// log batch: Kafka re-fetches them as new batches (its persister read gap
// window), which is the same at the record level.
func (sp *sharePartition) rebuild(ps *persistedState) {
	next := sp.start
	for _, pb := range ps.batches {
		if pb.LastOffset < sp.start {
			continue
		}
		first := max(pb.FirstOffset, sp.start)
		sp.gap(next, first-1)
		sp.cache = append(sp.cache, &inflight{first: first, last: pb.LastOffset, st: recState{state: pb.State, count: pb.DeliveryCount}})
		next = pb.LastOffset + 1
	}
	if len(sp.cache) == 0 {
		sp.end = sp.start
		return
	}
	sp.findNext = true
	sp.end = sp.cache[len(sp.cache)-1].last
	sp.advance()
}

// gap caches first..last as AVAILABLE (count 0), split on log batches.
func (sp *sharePartition) gap(first, last int64) {
	for off := first; off <= last; {
		end := last
		if bi := sp.log.batchAt(off); bi >= 0 {
			end = min(last, sp.log.batches[bi].last)
		}
		sp.cache = append(sp.cache, &inflight{first: off, last: end, st: recState{state: Available}})
		off = end + 1
	}
}

// ShareFetch is the ShareFetch request: session handling, piggy-backed
// acknowledgements, then the fetch (none for a final-epoch or renew-ack
// request), then, for the final epoch, the session close.
func (b *Broker) ShareFetch(now clock.Time, req ShareFetchRequest) ShareFetchResult {
	b.stats.Fetches++
	res := ShareFetchResult{AcquisitionLockTimeoutMs: b.GroupConfig(req.GroupID).RecordLockDurationMs}
	if req.GroupID == "" || req.MemberID == "" || req.MaxRecords < 0 || req.IsRenewAck && req.MaxRecords != 0 {
		res.Err = InvalidRequest
		return res
	}
	sk := sessionKey{req.GroupID, req.MemberID}
	sess := b.sessions[sk]
	switch req.ShareSessionEpoch {
	case -1:
		if len(req.Partitions) > 0 {
			res.Err = InvalidRequest
			return res
		}
		if sess == nil {
			res.Err = ShareSessionNotFound
			return res
		}
	case 0:
		if hasAcks(req.Acks) {
			res.Err = InvalidRequest
			return res
		}
		delete(b.sessions, sk) // replaced; its records stay acquired
		if int32(len(b.sessions)) >= b.cfg.MaxShareSessions {
			res.Err = ShareSessionLimitReached
			return res
		}
		b.sessions[sk] = &session{epoch: 1}
	default:
		if sess == nil {
			res.Err = ShareSessionNotFound
			return res
		}
		if sess.epoch != req.ShareSessionEpoch {
			res.Err = InvalidShareSessionEpoch
			return res
		}
		sess.epoch = nextEpoch(sess.epoch)
	}
	res.AckErrors, res.Ended, res.Renewed = b.applyAcks(now, req.GroupID, req.MemberID, req.IsRenewAck, req.Acks)
	if req.ShareSessionEpoch != -1 && !req.IsRenewAck {
		b.fetch(now, &req, &res)
	}
	if req.ShareSessionEpoch == -1 {
		res.Ended = append(res.Ended, b.closeSession(now, req.GroupID, req.MemberID)...)
	}
	return res
}

func hasAcks(acks []PartitionAcks) bool {
	for _, a := range acks {
		if len(a.Batches) > 0 {
			return true
		}
	}
	return false
}

// fetch acquires records from the requested partitions, rotated by the
// session epoch, sharing MaxRecords among them in order.
func (b *Broker) fetch(now clock.Time, req *ShareFetchRequest, res *ShareFetchResult) {
	parts := make([]TopicPartition, 0, len(req.Partitions))
	for _, tp := range req.Partitions {
		if !slices.Contains(parts, tp) {
			parts = append(parts, tp)
		}
	}
	if e := req.ShareSessionEpoch; e >= 1 && len(parts) > 1 {
		r := int(e % int32(len(parts)))
		parts = slices.Concat(parts[r:], parts[:r])
	}
	batchSize := int64(req.BatchSize)
	if batchSize <= 0 {
		batchSize = int64(req.MaxRecords)
	}
	remaining := int64(req.MaxRecords)
	if remaining <= 4096 {
		res.Deliveries = make([]Delivery, 0, remaining)
	}
	out := fetchOut{now: now, member: req.MemberID, deliveries: res.Deliveries}
	for _, tp := range parts {
		pf := PartitionFetch{TopicPartition: tp}
		sp, code := b.loadSP(req.GroupID, tp)
		if code != None {
			pf.Err = code
			res.Partitions = append(res.Partitions, pf)
			continue
		}
		out.ranges = nil
		switch {
		case remaining <= 0:
		case sp.canAcquire():
			switch off := sp.nextFetchOffset(); {
			case off < sp.log.start:
				// OFFSET_OUT_OF_RANGE from the log: catch up with the log
				// start offset and answer empty (error NONE).
				sp.moveToLogStart(sp.log.start)
			case off < sp.log.end():
				remaining -= sp.acquire(&out, req.AcquireMode, max(batchSize, 1), remaining, off)
			}
		case sp.end+1 < sp.log.end():
			// Records wait behind a full in-flight window.
			b.stats.LockLimited++
		}
		pf.Acquired = out.ranges
		res.Partitions = append(res.Partitions, pf)
	}
	res.Deliveries = out.deliveries
	if len(res.Deliveries) == 0 {
		res.Deliveries = nil
	}
}

// validAcks is KafkaApis.validateAcknowledgementBatches for one partition
// (ShareFetch/ShareAcknowledge v2).
func validAcks(batches []AckBatch, isRenew bool) bool {
	prevEnd := int64(-1)
	for _, ab := range batches {
		switch {
		case ab.FirstOffset > ab.LastOffset, ab.FirstOffset < prevEnd, len(ab.Types) == 0,
			len(ab.Types) > 1 && ab.LastOffset-ab.FirstOffset != int64(len(ab.Types))-1:
			return false
		}
		for _, t := range ab.Types {
			if t < AckGap || t > AckRenew || t == AckRenew && !isRenew {
				return false
			}
		}
		prevEnd = ab.LastOffset
	}
	return true
}

// seenBefore reports whether tp already had acknowledgements in prev.
func seenBefore(prev []PartitionAcks, tp TopicPartition) bool {
	for _, pa := range prev {
		if pa.TopicPartition == tp && len(pa.Batches) > 0 {
			return true
		}
	}
	return false
}

func hasRenew(batches []AckBatch) bool {
	for _, ab := range batches {
		for _, t := range ab.Types {
			if t == AckRenew {
				return true
			}
		}
	}
	return false
}

// applyAcks applies acknowledgements partition by partition; each
// partition is atomic on its own.
func (b *Broker) applyAcks(now clock.Time, groupID, memberID string, isRenew bool, acks []PartitionAcks) ([]PartitionError, []LeaseEvent, []Renewal) {
	var errs []PartitionError
	var ended []LeaseEvent
	var renewed []Renewal
	renewOK := b.GroupConfig(groupID).RenewAcknowledgeEnable
	for i, pa := range acks {
		if len(pa.Batches) == 0 {
			continue
		}
		code := None
		var sp *sharePartition
		switch {
		case seenBefore(acks[:i], pa.TopicPartition) || !validAcks(pa.Batches, isRenew):
			code = InvalidRequest
		case !renewOK && hasRenew(pa.Batches):
			code = InvalidRecordState // share.renew.acknowledge.enable=false
		default:
			if sp = b.sps[spKey{groupID, pa.TopicPartition}]; sp == nil {
				code = UnknownTopicOrPartition
			}
		}
		if sp != nil {
			var ev []LeaseEvent
			var rn []Renewal
			code, ev, rn = sp.acknowledge(now, memberID, pa.Batches)
			if ended == nil {
				ended = ev
			} else {
				ended = append(ended, ev...)
			}
			renewed = append(renewed, rn...)
		}
		errs = append(errs, PartitionError{TopicPartition: pa.TopicPartition, Err: code})
	}
	if len(errs) > 0 {
		b.stats.Acknowledges++
	}
	return errs, ended, renewed
}

// ShareAcknowledge is the ShareAcknowledge request. Epoch 0 is invalid
// (only ShareFetch opens a session); -1 acknowledges and then closes the
// session.
func (b *Broker) ShareAcknowledge(now clock.Time, req ShareAcknowledgeRequest) ShareAcknowledgeResult {
	res := ShareAcknowledgeResult{AcquisitionLockTimeoutMs: b.GroupConfig(req.GroupID).RecordLockDurationMs}
	if req.GroupID == "" || req.MemberID == "" {
		res.Err = InvalidRequest
		return res
	}
	if req.ShareSessionEpoch == 0 {
		res.Err = InvalidShareSessionEpoch
		return res
	}
	sk := sessionKey{req.GroupID, req.MemberID}
	sess := b.sessions[sk]
	if sess == nil {
		res.Err = ShareSessionNotFound
		return res
	}
	if req.ShareSessionEpoch != -1 {
		if sess.epoch != req.ShareSessionEpoch {
			res.Err = InvalidShareSessionEpoch
			return res
		}
		sess.epoch = nextEpoch(sess.epoch)
	}
	res.Partitions, res.Ended, res.Renewed = b.applyAcks(now, req.GroupID, req.MemberID, req.IsRenewAck, req.Acks)
	if req.ShareSessionEpoch == -1 {
		res.Ended = append(res.Ended, b.closeSession(now, req.GroupID, req.MemberID)...)
	}
	return res
}

// CloseSession is the member's connection to the broker closing: the share
// session is removed and the member's acquired records are released
// (ShareSessionCache's disconnect listener, ShareGroupListener.onMemberLeave).
func (b *Broker) CloseSession(now clock.Time, groupID, memberID string) SessionCloseResult {
	if b.sessions[sessionKey{groupID, memberID}] == nil {
		return SessionCloseResult{Err: ShareSessionNotFound}
	}
	return SessionCloseResult{Ended: b.closeSession(now, groupID, memberID)}
}

// closeSession removes a session and releases the member's records in
// every loaded share-partition of the group, in key order.
func (b *Broker) closeSession(now clock.Time, groupID, memberID string) []LeaseEvent {
	delete(b.sessions, sessionKey{groupID, memberID})
	var out []LeaseEvent
	for _, sp := range b.sortedSPs() {
		if sp.key.group == groupID {
			out = append(out, sp.release(now, memberID)...)
		}
	}
	return out
}
