package sim

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"popsim/clock"
	"popsim/model"
	"popsim/share"
)

// The adapter for Kafka share groups (package share, KIP-932). It drives
// share.Broker: Tick at NextDeadline (lock timeouts, member session
// timeouts), the producers' record batches (linger.ms), the broker's side
// of a share fetch that finds nothing (Kafka's DelayedShareFetch: the
// fetch waits until records can be acquired on one of its partitions or
// fetch.max.wait.ms passes; the engine itself answers at once), the share
// coordinator's write faults, and CloseSession when a consumer's process
// dies (its connection closes). It turns every result into trace events:
//
//	Delivery                                  lease
//	ACCEPT / RELEASE / REJECT answered         acked / released / rejected (Ended: the lease the engine ended)
//	RENEW answered                             renewed, Next = the lease it extended (the same lease)
//	release or lock timeout at the limit       dead-letter r=delivery-limit (place: the DLQ copy, if any), then the answer
//	REJECT with a DLQ copy                     dead-letter r=reject (place: the copy), then rejected
//	lock timeout                               lapse
//	session closed by a crash                  lapse r=session-closed (before the lock's deadline)
//	restart                                    lease-lost r=restart
//	a failed share-state write                 put-failure t=__share_group_state

// KafkaShareSettings are the kafka-share engine's section, under Kafka's
// config keys: the broker's group.share.* settings, the group configs
// every share group gets, the producers' linger.ms, and the upstream bug
// switches. Times are milliseconds (a duration such as 30s works too).
type KafkaShareSettings struct {
	RecordLockDurationMs    int32 `yaml:"group.share.record.lock.duration.ms" unit:"ms"`     // 30000, within min..max below
	MinRecordLockDurationMs int32 `yaml:"group.share.min.record.lock.duration.ms" unit:"ms"` // 15000
	MaxRecordLockDurationMs int32 `yaml:"group.share.max.record.lock.duration.ms" unit:"ms"` // 60000
	DeliveryCountLimit      int32 `yaml:"group.share.delivery.count.limit"`                  // 5, 2..10
	PartitionMaxRecordLocks int32 `yaml:"group.share.partition.max.record.locks"`            // 2000, 100..10000: the in-flight window
	HeartbeatIntervalMs     int32 `yaml:"group.share.heartbeat.interval.ms" unit:"ms"`       // 5000, 5000..15000
	SessionTimeoutMs        int32 `yaml:"group.share.session.timeout.ms" unit:"ms"`          // 45000, 45000..60000
	MaxSize                 int32 `yaml:"group.share.max.size"`                              // 200 members per share group
	MaxShareSessions        int32 `yaml:"group.share.max.share.sessions"`                    // 2000 share sessions per broker
	// AutoOffsetReset is share.auto.offset.reset: earliest or latest. The
	// simulator's default is earliest (Kafka's is latest): a run's
	// consumers must see every record, and with latest a share-partition
	// first loaded after its first record arrived, or reloaded after a
	// restart before any state write, skips records (docs/share.md).
	AutoOffsetReset        string `yaml:"share.auto.offset.reset"`
	RenewAcknowledgeEnable bool   `yaml:"share.renew.acknowledge.enable"` // true
	// DeadLetterTopic is errors.deadletterqueue.topic.name ("": none): the
	// adapter creates it with one partition.
	DeadLetterTopic      string `yaml:"errors.deadletterqueue.topic.name"`
	DeadLetterCopyRecord bool   `yaml:"errors.deadletterqueue.copy.record.enable"`
	// LingerMs is the producers' linger.ms (5, Kafka 4's default; 0..60000):
	// a producer's records for one partition within it form one batch.
	LingerMs int32 `yaml:"linger.ms" unit:"ms"`
	Bugs     share.Bugs
}

// defaultKafkaShareSettings are Kafka's defaults (the offset reset
// aside, see AutoOffsetReset).
func defaultKafkaShareSettings() EngineSettings {
	d := share.DefaultConfig()
	return &KafkaShareSettings{
		RecordLockDurationMs: d.RecordLockDurationMs, MinRecordLockDurationMs: d.MinRecordLockDurationMs,
		MaxRecordLockDurationMs: d.MaxRecordLockDurationMs, DeliveryCountLimit: d.DeliveryCountLimit,
		PartitionMaxRecordLocks: d.PartitionMaxRecordLocks, HeartbeatIntervalMs: d.HeartbeatIntervalMs,
		SessionTimeoutMs: d.SessionTimeoutMs, MaxSize: d.MaxSize, MaxShareSessions: d.MaxShareSessions,
		AutoOffsetReset: "earliest", RenewAcknowledgeEnable: d.Group.RenewAcknowledgeEnable, LingerMs: 5,
	}
}

// DefaultKafkaShareSettings returns the kafka-share engine's defaults.
func DefaultKafkaShareSettings() *KafkaShareSettings {
	return defaultKafkaShareSettings().(*KafkaShareSettings)
}

// config is the broker configuration the settings give.
func (k *KafkaShareSettings) config() share.Config {
	c := share.DefaultConfig()
	c.RecordLockDurationMs, c.MinRecordLockDurationMs, c.MaxRecordLockDurationMs = k.RecordLockDurationMs, k.MinRecordLockDurationMs, k.MaxRecordLockDurationMs
	c.DeliveryCountLimit, c.PartitionMaxRecordLocks = k.DeliveryCountLimit, k.PartitionMaxRecordLocks
	c.HeartbeatIntervalMs, c.SessionTimeoutMs, c.MaxSize, c.MaxShareSessions = k.HeartbeatIntervalMs, k.SessionTimeoutMs, k.MaxSize, k.MaxShareSessions
	c.Group.AutoOffsetReset = share.ResetLatest
	if k.AutoOffsetReset == "earliest" {
		c.Group.AutoOffsetReset = share.ResetEarliest
	}
	c.Group.RenewAcknowledgeEnable = k.RenewAcknowledgeEnable
	c.Group.DeadLetterTopic, c.Group.DeadLetterCopyRecord = k.DeadLetterTopic, k.DeadLetterCopyRecord
	c.Bugs = k.Bugs
	return c
}

// Validate checks the settings with Kafka's bounds; errors name the key.
func (k *KafkaShareSettings) Validate() error {
	if k.AutoOffsetReset != "earliest" && k.AutoOffsetReset != "latest" {
		return &keyError{"share.auto.offset.reset", "earliest or latest", fmt.Sprintf("%q", k.AutoOffsetReset)}
	}
	if k.LingerMs < 0 || k.LingerMs > 60000 {
		return &keyError{"linger.ms", "0..60000", fmt.Sprintf("%d out of range", k.LingerMs)}
	}
	if t := k.DeadLetterTopic; t != "" {
		if err := model.ValidateTopic(t); err != nil {
			return &keyError{"errors.deadletterqueue.topic.name", "", strings.TrimPrefix(err.Error(), "model: ")}
		}
	}
	c := k.config()
	if err := c.Validate(); err != nil {
		msg := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(err.Error(), "share: "), "group "), "config ")
		for _, key := range FieldKeys(reflect.TypeOf(*k)) {
			// Group-level keys (share.x) are the broker's (group.share.x).
			if strings.HasPrefix(msg, key+" ") || strings.HasPrefix("group."+msg, key+" ") {
				return &keyError{key, "", msg}
			}
		}
		return &keyError{"", "", msg}
	}
	return nil
}

// keyError is an engine setting's validation error: its key (the
// section's), what is wrong and what is allowed.
type keyError struct{ key, want, msg string }

func (e *keyError) Error() string {
	s := e.msg
	if e.want != "" {
		s += ": want " + e.want
	}
	if e.key != "" {
		s = e.key + ": " + s
	}
	return s
}

// checkKeyed reports an engine section's validation under engine.<key>.
func checkKeyed(s EngineSettings, v *validator) {
	err := s.Validate()
	if err == nil {
		return
	}
	if ke, ok := err.(*keyError); ok {
		path := "engine"
		if ke.key != "" {
			path += "." + ke.key
		}
		v.add(path, ke.want, "%s", ke.msg)
		return
	}
	v.add("engine", "", "%v", err)
}

func checkKafkaShare(s EngineSettings, v *validator) { checkKeyed(s, v) }

// checkKafkaShareFaults: a Kafka broker has no duplicate deliveries of its
// own (SQS's standard queues do).
func checkKafkaShareFaults(kind EngineKind, f *FaultSpec, v *validator) {
	refuseFault(v, "faults.duplicateDelivery", f.DuplicateDelivery != 0, kind, "only sqs-standard queues deliver duplicates of their own accord")
	refuseFault(v, "faults.reviveReadFailure", f.ReviveReadFailure != 0, kind, "Kafka redelivers in place and reads no message to revive")
	refuseBrokerStop(v, f, kind)
}

// kafkaShare is the Kafka share-group engine behind the seam.
type kafkaShare struct {
	b   *share.Broker
	s   *sim
	set *KafkaShareSettings

	groups   []shareGroup
	linger   clock.Duration
	batches  map[share.TopicPartition]*recordBatch
	pending  []share.TopicPartition // batches waiting for their linger, oldest first
	parked   []*shareFetchReq       // fetches waiting for records (DelayedShareFetch)
	inFlight int                    // acquired records (live leases)

	faultSeed uint64
	faultPPM  int64
	writes    uint64 // calls that may write share-group state, for the fault draw

	sessionsRefused, joinsRefused int64
}

// shareGroup is a share group and the topic its consumers subscribe to.
type shareGroup struct{ name, topic string }

// recordBatch is a producer batch filling during linger.ms.
type recordBatch struct {
	tp       share.TopicPartition
	producer []int32
	records  []*model.Message
	due      clock.Time
}

// The adapter's timers.
const (
	kafkaDeadline  int32 = iota // share.Broker.NextDeadline
	kafkaLinger                 // the oldest producer batch is due
	kafkaFetchWait              // a waiting fetch's fetch.max.wait.ms ends
)

// shareStateTopic names share-group state writes in put-failure events.
const shareStateTopic = "__share_group_state"

// kafkaCoverage are the paths the Kafka adapter and consumer count.
var kafkaCoverage = []string{"session-release", "delivery-limit", "drop-implicit-accept"}

func openKafkaShare(s *sim, settings EngineSettings) (Engine, error) {
	set := settings.(*KafkaShareSettings)
	b, err := share.New(set.config())
	if err != nil {
		return nil, err
	}
	a := &kafkaShare{b: b, s: s, set: set, linger: clock.MillisDuration(int64(set.LingerMs)), batches: map[share.TopicPartition]*recordBatch{}}
	for _, t := range s.cfg.Topics {
		if err := b.CreateTopic(t.Name, t.Queues); err != nil {
			return nil, err
		}
	}
	if t := set.DeadLetterTopic; t != "" && b.Partitions(t) < 0 {
		if err := b.CreateTopic(t, 1); err != nil {
			return nil, err
		}
	}
	for _, name := range s.c.groupList {
		for _, cs := range s.c.consumers {
			if cs.Group == name {
				a.groups = append(a.groups, shareGroup{name: name, topic: cs.Topic})
				break
			}
		}
	}
	return a, nil
}

// kafka is the run's engine as the Kafka adapter (its clients need it).
func (s *sim) kafka() *kafkaShare {
	a, ok := s.eng.(*kafkaShare)
	if !ok {
		panic("sim: a Kafka share consumer on another engine")
	}
	return a
}

func (a *kafkaShare) emit(now clock.Time, e model.Event) { a.s.tr.emitAt(now, e) }

func (a *kafkaShare) Start(now clock.Time, out *Outcome) {}

func (a *kafkaShare) SetFaults(f EngineFaults) {
	a.faultSeed, a.faultPPM = f.Seed, f.RedeliveryWritePPM
}

func (a *kafkaShare) CheckInvariants() error { return a.b.CheckInvariants() }

// Store adds the record to its producer batch for the partition; the
// batch is produced when linger.ms has passed (at once with linger.ms 0).
func (a *kafkaShare) Store(now clock.Time, producer int32, m *model.Message, out *Outcome) bool {
	tp := share.TopicPartition{Topic: m.Topic, Partition: m.QueueID}
	bt := a.batches[tp]
	if bt == nil {
		bt = &recordBatch{tp: tp, due: now.Add(a.linger)}
		a.batches[tp] = bt
		a.pending = append(a.pending, tp)
	}
	bt.records = append(bt.records, m)
	bt.producer = append(bt.producer, producer)
	if a.linger == 0 {
		a.flush(now, out)
	} else {
		out.arm(kafkaLinger, a.batches[a.pending[0]].due)
	}
	return true
}

// flush produces every batch whose linger has passed.
func (a *kafkaShare) flush(now clock.Time, out *Outcome) {
	for len(a.pending) > 0 {
		bt := a.batches[a.pending[0]]
		if bt.due > now {
			out.arm(kafkaLinger, bt.due)
			return
		}
		a.pending = a.pending[1:]
		delete(a.batches, bt.tp)
		res := a.b.Produce(now, share.ProduceRequest{TopicPartition: bt.tp, Records: bt.records})
		for i, m := range bt.records {
			if res.Err != share.None {
				a.emit(now, model.Event{Kind: model.EvProduceFailed, Client: bt.producer[i], Msg: m.ID, Code: int32(res.Err)})
				continue
			}
			a.emit(now, model.Event{Kind: model.EvProduce, Client: bt.producer[i], Msg: m.ID, Topic: m.Topic, Queue: m.QueueID, Offset: res.BaseOffset + int64(i)})
		}
		a.wake(now, bt.tp, out)
	}
}

// Requests of the Kafka share consumer.

// shareHeartbeatReq is ShareGroupHeartbeat (to the group coordinator).
type shareHeartbeatReq struct {
	reqBase
	req share.HeartbeatRequest
	res share.HeartbeatResult
}

// shareAck is one record's acknowledgement as the client sends it.
type shareAck struct {
	tp     share.TopicPartition
	offset int64
	typ    share.AckType
	msg    model.MsgID
	lease  model.LeaseID
	at     clock.Time // delivered at (service time)
	// reason: a RENEW's (the injected edge).
	reason model.Reason
}

// shareFetchReq is a ShareFetch: piggy-backed acknowledgements, then a
// fetch from the member's assigned partitions.
type shareFetchReq struct {
	reqBase
	req  share.ShareFetchRequest
	acks []shareAck
	res  share.ShareFetchResult
	// next is the session epoch the client sends next (the fetch may have
	// been re-run while it waited, each run one more epoch).
	next  int32
	until clock.Time // while waiting: fetch.max.wait.ms ends
	// watch are the partitions it was traced as parked on (the others'
	// records waited behind a full in-flight window).
	watch []share.TopicPartition
}

// shareAckReq is a ShareAcknowledge: commitSync's, or a RENEW.
type shareAckReq struct {
	reqBase
	req  share.ShareAcknowledgeRequest
	acks []shareAck
	res  share.ShareAcknowledgeResult
}

func (*shareHeartbeatReq) lost(*model.Event, model.Reason) bool { return false }

func (r *shareFetchReq) lost(e *model.Event, why model.Reason) bool {
	lostReceive(e, why, len(r.res.Deliveries))
	return true
}

func (r *shareFetchReq) lostMore(s *sim, why model.Reason) { lostAcks(s, r.c.idx, r.acks, why) }

func (*shareAckReq) lost(*model.Event, model.Reason) bool { return false }

func (r *shareAckReq) lostMore(s *sim, why model.Reason) { lostAcks(s, r.c.idx, r.acks, why) }

// lostAcks traces the loss of acknowledgements a request carried: a lost
// ACCEPT or RENEW is traced as such (a RELEASE or REJECT that never
// arrives just leaves its lock to run out); a lost answer as
// ack-response-lost.
func lostAcks(s *sim, client int32, acks []shareAck, why model.Reason) {
	for i := range acks {
		var e model.Event
		if lostAck(&e, client, &acks[i], why) {
			s.emit(e)
		}
	}
}

func lostAck(e *model.Event, client int32, k *shareAck, why model.Reason) bool {
	*e = model.Event{Client: client, Msg: k.msg, Lease: k.lease}
	switch {
	case why == model.RLate, why == model.RTimeout:
		return false // served, or still on its way: its answer says
	case k.typ == share.AckRenew:
		e.Kind, e.Reason = model.EvRenewLost, why
	case why == model.RResponse:
		e.Kind = model.EvAckResponseLost
	case k.typ == share.AckAccept:
		e.Kind, e.Reason = model.EvAckLost, why
	default:
		return false
	}
	return true
}

func (a *kafkaShare) Serve(now clock.Time, r Request, out *Outcome) {
	switch r := r.(type) {
	case *shareHeartbeatReq:
		r.res = a.b.Heartbeat(now, r.req)
		if r.res.Err == share.GroupMaxSizeReached {
			a.joinsRefused++
		}
		out.answered(r)
	case *shareFetchReq:
		a.fetch(now, r, out)
	case *shareAckReq:
		fail := a.failWrites()
		r.res = a.b.ShareAcknowledge(now, r.req)
		a.endFaults(now, fail)
		a.answerAcks(now, r.c, r.acks, r.res.Err, r.res.Partitions, r.res.Ended, r.res.Renewed, out)
		out.answered(r)
	default:
		panic("sim: a request the Kafka share engine does not serve")
	}
	a.armDeadline(out)
}

// fetch serves a ShareFetch: the acknowledgements it carries, then the
// fetch; one that acquires nothing waits (DelayedShareFetch), traced as
// parked on each of its partitions whose records are not held back by a
// full in-flight window.
func (a *kafkaShare) fetch(now clock.Time, r *shareFetchReq, out *Outcome) {
	fail := false
	if len(r.acks) > 0 {
		fail = a.failWrites()
	}
	limited := a.b.Stats().LockLimited
	r.res = a.b.ShareFetch(now, r.req)
	a.endFaults(now, fail)
	r.next = nextShareEpoch(r.req.ShareSessionEpoch)
	if r.res.Err == share.ShareSessionLimitReached {
		a.sessionsRefused++
	}
	a.answerAcks(now, r.c, r.acks, r.res.Err, r.res.AckErrors, r.res.Ended, nil, out)
	a.traceDeliveries(now, r)
	if r.res.Err != share.None || len(r.res.Deliveries) > 0 || r.req.MaxRecords == 0 {
		out.answered(r)
		return
	}
	r.until = now.Add(r.c.cl.(*kafkaShareConsumer).maxWait())
	a.parked = append(a.parked, r)
	out.arm(kafkaFetchWait, r.until)
	blocked := a.b.Stats().LockLimited > limited
	for _, tp := range r.req.Partitions {
		if blocked && a.windowFull(r.req.GroupID, tp) {
			continue
		}
		r.watch = append(r.watch, tp)
		a.emit(now, model.Event{Kind: model.EvParked, Client: r.c.idx, Topic: tp.Topic, Queue: tp.Partition, Deadline: r.until})
	}
}

// windowFull reports whether tp's share-partition holds records back
// behind its in-flight window.
func (a *kafkaShare) windowFull(group string, tp share.TopicPartition) bool {
	st, ok := a.b.SharePartition(group, tp)
	return ok && st.Loaded && st.Window >= int64(a.b.GroupConfig(group).PartitionMaxRecordLocks) && st.SPEO+1 < st.LogEndOffset
}

// nextShareEpoch is the session epoch after a request with epoch e.
func nextShareEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// traceDeliveries traces the leases a fetch granted.
func (a *kafkaShare) traceDeliveries(now clock.Time, r *shareFetchReq) {
	for i := range r.res.Deliveries {
		d := &r.res.Deliveries[i]
		a.inFlight++
		a.emit(now, model.Event{Kind: model.EvLease, Client: r.c.idx, Msg: d.Msg.ID, Lease: d.Lease, Topic: d.Topic, Queue: d.Partition,
			Offset: d.Offset, Attempt: d.DeliveryCount, Deadline: d.Deadline})
	}
}

// wake re-runs the waiting fetches that name tp, as a DelayedShareFetch
// completes once records can be acquired. A fetch that still acquires
// nothing goes on waiting, unless it was traced as parked on tp and tp's
// in-flight window now holds the records back: then it completes empty at
// once (Kafka's would wait out fetch.max.wait.ms), which says that the
// records are not deliverable, and the client's next fetch waits without
// watching tp.
func (a *kafkaShare) wake(now clock.Time, tp share.TopicPartition, out *Outcome) {
	for i := 0; i < len(a.parked); i++ {
		r := a.parked[i]
		if !slices.Contains(r.req.Partitions, tp) {
			continue
		}
		limited := a.b.Stats().LockLimited
		req := r.req
		req.ShareSessionEpoch, req.Acks = r.next, nil
		res := a.b.ShareFetch(now, req)
		if res.Err == share.None {
			r.next = nextShareEpoch(r.next)
		}
		blocked := a.b.Stats().LockLimited > limited && slices.Contains(r.watch, tp) && a.windowFull(req.GroupID, tp)
		if res.Err == share.None && len(res.Deliveries) == 0 && !blocked {
			continue
		}
		a.parked = slices.Delete(a.parked, i, i+1)
		i--
		r.res.Err, r.res.Deliveries, r.res.Partitions = res.Err, res.Deliveries, res.Partitions
		a.traceDeliveries(now, r)
		out.answered(r)
	}
}

// wakeEnded wakes the fetches waiting on partitions where leases ended
// with their record available again.
func (a *kafkaShare) wakeEnded(now clock.Time, evs []share.LeaseEvent, out *Outcome) {
	var done []share.TopicPartition
	for i := range evs {
		if evs[i].State == share.Available && !slices.Contains(done, evs[i].TopicPartition) {
			done = append(done, evs[i].TopicPartition)
			a.wake(now, evs[i].TopicPartition, out)
		}
	}
}

// fetchWait completes the waiting fetches whose fetch.max.wait.ms ended,
// empty.
func (a *kafkaShare) fetchWait(now clock.Time, out *Outcome) {
	next := clock.Time(-1)
	for i := 0; i < len(a.parked); i++ {
		r := a.parked[i]
		if r.until <= now {
			a.parked = slices.Delete(a.parked, i, i+1)
			i--
			out.answered(r)
			continue
		}
		if next < 0 || r.until < next {
			next = r.until
		}
	}
	if next >= 0 {
		out.arm(kafkaFetchWait, next)
	}
}

// answerAcks traces the engine's answer to each acknowledgement a request
// carried: the request's error, else the partition's (acknowledgements of
// a partition are atomic), else the lease the engine ended or renewed for
// that offset.
func (a *kafkaShare) answerAcks(now clock.Time, c *consumer, acks []shareAck, top share.ErrorCode, errs []share.PartitionError, ended []share.LeaseEvent, renewed []share.Renewal, out *Outcome) {
	if len(acks) == 0 {
		return
	}
	for i := range acks {
		k := &acks[i]
		e := model.Event{Client: c.idx, Msg: k.msg, Lease: k.lease}
		switch k.typ {
		case share.AckAccept:
			e.Kind = model.EvAcked
		case share.AckRelease:
			e.Kind = model.EvReleased
		case share.AckReject:
			e.Kind = model.EvRejected
		case share.AckRenew:
			e.Kind = model.EvRenewed
		}
		code := top
		if code == share.None {
			code = partitionErr(errs, k.tp)
		}
		e.Code = int32(code)
		if code == share.None {
			if k.typ == share.AckRenew {
				for _, rn := range renewed {
					if rn.TopicPartition == k.tp && rn.Offset == k.offset {
						e.Next, e.Deadline = rn.Lease, rn.Deadline
						e.Topic, e.Queue, e.Offset = k.tp.Topic, k.tp.Partition, k.offset
					}
				}
			} else if ev := endedAt(ended, k.tp, k.offset); ev != nil {
				e.Ended = ev.Lease
				a.inFlight--
				a.deadLetter(now, ev, c.idx)
				switch ev.End {
				case share.EndAccepted:
					a.s.meter.acked(c.g, k.msg, k.at, now)
				case share.EndRejected:
					a.s.meter.finish(c.g, k.msg)
				}
			}
		}
		a.emit(now, e)
	}
	a.wakeEnded(now, ended, out)
}

func partitionErr(errs []share.PartitionError, tp share.TopicPartition) share.ErrorCode {
	for _, pe := range errs {
		if pe.TopicPartition == tp {
			return pe.Err
		}
	}
	return share.None
}

func endedAt(evs []share.LeaseEvent, tp share.TopicPartition, off int64) *share.LeaseEvent {
	for i := range evs {
		if evs[i].TopicPartition == tp && evs[i].Offset == off {
			return &evs[i]
		}
	}
	return nil
}

// deadLetter traces a lease end that archived its record at the
// delivery limit, or a REJECT the engine copied to the dead-letter topic:
// the engine's policy ended the message (the copy is its place, if any).
// It comes before the answer that caused it.
func (a *kafkaShare) deadLetter(now clock.Time, ev *share.LeaseEvent, client int32) bool {
	e := model.Event{Kind: model.EvDeadLetter, Client: -1, Group: ev.Group, Msg: ev.Msg, Lease: ev.Lease}
	switch ev.End {
	case share.EndReleasedAtLimit, share.EndLockTimeoutAtLimit, share.EndSessionClosedAtLimit:
		e.Reason = model.RDeliveryLimit
	case share.EndLockTimeoutBelowStart, share.EndSessionClosedBelowStart:
		e.Reason = model.RRetention
	case share.EndRejected:
		if ev.DLQ == nil {
			return false
		}
		e.Reason = model.RRejectPolicy
	default:
		return false
	}
	if c := ev.DLQ; c != nil {
		e.Topic, e.Queue, e.Offset = c.Topic, c.QueueID, c.QueueOffset
		a.s.cov.hit("dlq")
	}
	if e.Reason == model.RDeliveryLimit {
		a.s.cov.hit("delivery-limit")
	}
	a.s.meter.finish(a.s.byName[ev.Group], ev.Msg)
	a.emit(now, e)
	return true
}

// traceEnded traces leases the engine ended on its own: lock timeouts,
// session closes, at the limit or not. A lock timeout whose share-state
// write failed is traced r=unpersisted.
func (a *kafkaShare) traceEnded(now clock.Time, evs []share.LeaseEvent, out *Outcome) {
	for i := range evs {
		ev := &evs[i]
		a.inFlight--
		if a.deadLetter(now, ev, -1) {
			continue
		}
		e := model.Event{Kind: model.EvLapse, Client: -1, Msg: ev.Msg, Lease: ev.Lease}
		switch {
		case ev.End == share.EndSessionClosed:
			e.Reason = model.RSessionClosed
			a.s.cov.hit("session-release")
		case ev.PersistFailed:
			// The lock timeout stands in memory only: a restart
			// reloads the count written before it.
			e.Reason = model.RUnpersisted
		}
		a.emit(now, e)
	}
	a.wakeEnded(now, evs, out)
}

// failWrites decides whether the share-group state writes of the call
// about to run fail (the revive-put-failure site: the run's fault seed
// and the call's ordinal decide), and installs the persister fault.
func (a *kafkaShare) failWrites() bool {
	if a.faultPPM == 0 {
		return false
	}
	a.writes++
	if int64(splitmix64(a.faultSeed^splitmix64(a.writes))%1_000_000) >= a.faultPPM {
		return false
	}
	for _, g := range a.groups {
		a.b.SetPersisterFault(share.PersisterFault{Group: g.name, Partition: -1, Count: -1, Err: share.CoordinatorNotAvailable})
	}
	return true
}

// endFaults clears the fault failWrites installed and traces the writes
// that failed.
func (a *kafkaShare) endFaults(now clock.Time, fail bool) {
	if !fail {
		return
	}
	for _, g := range a.groups {
		a.b.SetPersisterFault(share.PersisterFault{Group: g.name, Partition: -1, Count: 0})
	}
	a.s.cov.hit("revive-put-failure")
	a.emit(now, model.Event{Kind: model.EvPutFailure, Client: -1, Topic: shareStateTopic})
}

func (a *kafkaShare) armDeadline(out *Outcome) {
	if t, ok := a.b.NextDeadline(); ok {
		out.arm(kafkaDeadline, t)
	}
}

func (a *kafkaShare) Tick(now clock.Time, timer int32, out *Outcome) {
	switch timer {
	case kafkaDeadline:
		fail := a.failWrites()
		res := a.b.Tick(now)
		a.endFaults(now, fail)
		a.traceEnded(now, res.Ended, out)
		a.armDeadline(out)
	case kafkaLinger:
		a.flush(now, out)
	case kafkaFetchWait:
		a.fetchWait(now, out)
	}
}

// Disconnect: the crashed process's connection closes, which closes its
// share session and releases its acquired records at once (Kafka's
// connection-close listener); its waiting fetch is dropped. The member
// stays in its group until share.session.timeout.ms passes without a
// heartbeat.
func (a *kafkaShare) Disconnect(now clock.Time, c *consumer, out *Outcome) {
	for i := 0; i < len(a.parked); i++ {
		if a.parked[i].c == c {
			a.parked = slices.Delete(a.parked, i, i+1)
			i--
		}
	}
	g := c.g.name
	fail := a.failWrites()
	res := a.b.CloseSession(now, g, c.clientID)
	a.endFaults(now, fail)
	a.traceEnded(now, res.Ended, out)
	a.armDeadline(out)
}

// Restart restarts the broker: every acquisition lock and share session
// is lost; waiting fetches are re-run and find their session gone.
func (a *kafkaShare) Restart(now clock.Time, out *Outcome) {
	r := a.b.Restart(now)
	for i := range r.Lost {
		ev := &r.Lost[i]
		a.inFlight--
		a.emit(now, model.Event{Kind: model.EvLeaseLost, Client: -1, Msg: ev.Msg, Lease: ev.Lease, Reason: model.RRestart})
	}
	a.emit(now, model.Event{Kind: model.EvBrokerRestart, Client: -1})
	for _, f := range a.parked {
		req := f.req
		req.ShareSessionEpoch, req.Acks = f.next, nil
		res := a.b.ShareFetch(now, req)
		f.res.Err, f.res.Deliveries, f.res.Partitions = res.Err, res.Deliveries, res.Partitions
		a.traceDeliveries(now, f)
		out.answered(f)
	}
	a.parked = a.parked[:0]
	a.armDeadline(out)
}

// Status: the acquired records, and per group every partition of its
// topic with the share-partition start offset (SPSO) as both the read and
// the committed position: it reaches the log end only when every record
// is acknowledged or archived.
func (a *kafkaShare) Status(positions bool, dst []Position) (int, []Position) {
	dst = dst[:0]
	if !positions {
		return a.inFlight, dst
	}
	for _, g := range a.groups {
		n := a.b.Partitions(g.topic)
		for p := int32(0); p < n; p++ {
			tp := share.TopicPartition{Topic: g.topic, Partition: p}
			end := a.b.LogEndOffset(tp)
			spso, durable := int64(-1), int64(-1)
			if st, ok := a.b.SharePartition(g.name, tp); ok {
				spso, durable = st.PersistedStartOffset, st.DurableStart()
				if st.Loaded {
					spso = st.SPSO
				}
			}
			dst = append(dst, Position{Group: g.name, Topic: g.topic, Queue: p, Max: end, Consumed: spso, Commit: spso, Durable: durable})
		}
	}
	return a.inFlight, dst
}

// limits are the Kafka caps the run hit.
func (a *kafkaShare) limits() []model.LimitHit {
	var out []model.LimitHit
	if n := a.b.Stats().LockLimited; n > 0 {
		out = append(out, model.LimitHit{Engine: string(KafkaShare), Limit: "group.share.partition.max.record.locks", Value: int64(a.set.PartitionMaxRecordLocks),
			Count: n, What: "fetches of a share-partition whose records waited behind a full in-flight window"})
	}
	if a.joinsRefused > 0 {
		out = append(out, model.LimitHit{Engine: string(KafkaShare), Limit: "group.share.max.size", Value: int64(a.set.MaxSize),
			Count: a.joinsRefused, What: "heartbeats refused GROUP_MAX_SIZE_REACHED"})
	}
	if a.sessionsRefused > 0 {
		out = append(out, model.LimitHit{Engine: string(KafkaShare), Limit: "group.share.max.share.sessions", Value: int64(a.set.MaxShareSessions),
			Count: a.sessionsRefused, What: "fetches refused SHARE_SESSION_LIMIT_REACHED"})
	}
	return out
}
