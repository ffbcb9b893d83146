package sim

import (
	"fmt"
	"slices"
	"strconv"

	"popsim/clock"
	"popsim/model"
	"popsim/sqs"
)

// The adapter for Amazon SQS (package sqs), standard or FIFO queues. Each
// topic of the scenario is one queue (orders, or orders.fifo), with a
// dead-letter queue (orders-dlq) when a RedrivePolicy is set; its messages
// live at (topic, 0, the queue's position). A FIFO message's
// MessageGroupId is its producer's queue choice (q0, q1, ...): the
// workload's queues become message groups, as a RocketMQ producer's key
// picks its ordered queue. It drives sqs.Service: Tick at NextDue; a long
// poll it parks is answered from a later call's effects; Disconnect
// cancels a crashed client's parked poll. It turns every result into trace
// events:
//
//	Delivery                                  lease (a ReceiveRequestAttemptId retry: lease again, same id)
//	DeleteMessage answered                    acked (Ended: the lease it ended; 0 when the handle's lease had ended)
//	ChangeMessageVisibility 0 answered        released
//	ChangeMessageVisibility answered          renewed, Next = the same lease, Deadline the new one
//	Expired                                   lapse
//	Superseded (the duplicate fault)          lease-lost r=superseded, Next = the duplicate's lease
//	Redriven                                  dead-letter r=redrive (place: the DLQ copy)
//	RetentionExpired                          dead-letter r=retention (a loss by policy)

// SQSStandardSettings are the sqs-standard engine's section: the queue
// attributes every queue is created with, under SQS's attribute names
// (seconds, as SQS takes them).
type SQSStandardSettings struct {
	VisibilityTimeout             int `yaml:"VisibilityTimeout"`             // 30, 0..43200
	MessageRetentionPeriod        int `yaml:"MessageRetentionPeriod"`        // 345600 (4 days), 60..1209600
	DelaySeconds                  int `yaml:"DelaySeconds"`                  // 0, 0..900
	ReceiveMessageWaitTimeSeconds int `yaml:"ReceiveMessageWaitTimeSeconds"` // 0, 0..20
	// RedrivePolicy's maxReceiveCount (1..1000) moves a message received
	// that many times to the queue's dead-letter queue, which the adapter
	// creates (<topic>-dlq); 0, the default, is no redrive policy.
	RedrivePolicy SQSRedrivePolicy `yaml:"RedrivePolicy"`
}

// SQSRedrivePolicy is the RedrivePolicy attribute; its
// deadLetterTargetArn is the adapter's dead-letter queue.
type SQSRedrivePolicy struct {
	MaxReceiveCount int `yaml:"maxReceiveCount"`
}

// SQSFIFOSettings are the sqs-fifo engine's section: the standard
// attributes and the FIFO ones.
type SQSFIFOSettings struct {
	SQSStandardSettings       `yaml:",inline"`
	ContentBasedDeduplication bool   `yaml:"ContentBasedDeduplication"` // false: each send names its deduplication id
	DeduplicationScope        string `yaml:"DeduplicationScope"`        // queue or messageGroup
	FifoThroughputLimit       string `yaml:"FifoThroughputLimit"`       // perQueue or perMessageGroupId
}

func defaultSQSStandardSettings() EngineSettings {
	d := sqs.DefaultAttributes(false)
	return &SQSStandardSettings{VisibilityTimeout: d.VisibilityTimeout, MessageRetentionPeriod: d.MessageRetentionPeriod}
}

func defaultSQSFIFOSettings() EngineSettings {
	d := sqs.DefaultAttributes(true)
	return &SQSFIFOSettings{SQSStandardSettings: *defaultSQSStandardSettings().(*SQSStandardSettings),
		DeduplicationScope: d.DeduplicationScope, FifoThroughputLimit: d.FifoThroughputLimit}
}

// DefaultSQSStandardSettings and DefaultSQSFIFOSettings return the
// engines' defaults: AWS's.
func DefaultSQSStandardSettings() *SQSStandardSettings {
	return defaultSQSStandardSettings().(*SQSStandardSettings)
}

// DefaultSQSFIFOSettings returns the sqs-fifo engine's defaults.
func DefaultSQSFIFOSettings() *SQSFIFOSettings { return defaultSQSFIFOSettings().(*SQSFIFOSettings) }

// Validate checks the attributes against SQS's ranges.
func (a *SQSStandardSettings) Validate() error {
	for _, r := range []struct {
		key       string
		v, lo, hi int
	}{
		{sqs.AttrVisibilityTimeout, a.VisibilityTimeout, 0, sqs.MaxVisibilitySeconds},
		{sqs.AttrMessageRetentionPeriod, a.MessageRetentionPeriod, sqs.MinRetentionSeconds, sqs.MaxRetentionSeconds},
		{sqs.AttrDelaySeconds, a.DelaySeconds, 0, sqs.MaxDelaySeconds},
		{sqs.AttrReceiveMessageWaitTimeSeconds, a.ReceiveMessageWaitTimeSeconds, 0, sqs.MaxWaitTimeSeconds},
		{sqs.AttrRedrivePolicy + ".maxReceiveCount", a.RedrivePolicy.MaxReceiveCount, 0, sqs.MaxReceiveCountLimit},
	} {
		if r.v < r.lo || r.v > r.hi {
			return &keyError{r.key, fmt.Sprintf("%d..%d", r.lo, r.hi), fmt.Sprintf("%d out of range", r.v)}
		}
	}
	return nil
}

// Validate checks the standard and the FIFO attributes.
func (a *SQSFIFOSettings) Validate() error {
	if err := a.SQSStandardSettings.Validate(); err != nil {
		return err
	}
	if s := a.DeduplicationScope; s != sqs.ScopeQueue && s != sqs.ScopeMessageGroup {
		return &keyError{sqs.AttrDeduplicationScope, sqs.ScopeQueue + " or " + sqs.ScopeMessageGroup, fmt.Sprintf("%q", s)}
	}
	if s := a.FifoThroughputLimit; s != sqs.ThroughputPerQueue && s != sqs.ThroughputPerGroupID {
		return &keyError{sqs.AttrFifoThroughputLimit, sqs.ThroughputPerQueue + " or " + sqs.ThroughputPerGroupID, fmt.Sprintf("%q", s)}
	}
	return nil
}

func checkSQS(s EngineSettings, v *validator) { checkKeyed(s, v) }

// sqsUnscheduled are the scheduled faults SQS has no equivalent for.
var sqsUnscheduled = []FaultKind{FaultBrokerRestart, FaultRevivePutFailure, FaultReviveReadFailure, FaultBrokerStop}

// checkSQSFaults: SQS is a managed service: there is no broker to restart
// and no store write to fail; the duplicate delivery is a standard queue's.
func checkSQSFaults(kind EngineKind, f *FaultSpec, v *validator) {
	refuseFault(v, "faults.brokerRestart.every", f.BrokerRestart.Every != 0, kind, "SQS is a managed service with no broker to restart")
	refuseFault(v, "faults.brokerStop.every", f.BrokerStop.Every != 0, kind, "SQS is a managed service with no broker to stop")
	refuseFault(v, "faults.revivePutFailure", f.RevivePutFailure != 0, kind, "SQS redelivers in place and exposes no store write to fail")
	refuseFault(v, "faults.reviveReadFailure", f.ReviveReadFailure != 0, kind, "SQS redelivers in place and reads no message to revive")
}

// checkSQSFIFOFaults: FIFO queues deliver no duplicates (AWS documents
// them as exactly-once; the engine ignores the fault there).
func checkSQSFIFOFaults(kind EngineKind, f *FaultSpec, v *validator) {
	checkSQSFaults(kind, f, v)
	refuseFault(v, "faults.duplicateDelivery", f.DuplicateDelivery != 0, kind, "FIFO queues deliver each message exactly once")
}

// attributes are the CreateQueue attributes of a queue with these
// settings; dlq is its dead-letter queue's ARN ("" for none).
func (a *SQSStandardSettings) attributes(fifo bool, dlq string) map[string]string {
	m := map[string]string{
		sqs.AttrVisibilityTimeout:             strconv.Itoa(a.VisibilityTimeout),
		sqs.AttrMessageRetentionPeriod:        strconv.Itoa(a.MessageRetentionPeriod),
		sqs.AttrDelaySeconds:                  strconv.Itoa(a.DelaySeconds),
		sqs.AttrReceiveMessageWaitTimeSeconds: strconv.Itoa(a.ReceiveMessageWaitTimeSeconds),
	}
	if fifo {
		m[sqs.AttrFifoQueue] = "true"
	}
	if dlq != "" {
		m[sqs.AttrRedrivePolicy] = fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, dlq, a.RedrivePolicy.MaxReceiveCount)
	}
	return m
}

// sqsEngine is the SQS engine behind the seam.
type sqsEngine struct {
	svc  *sqs.Service
	s    *sim
	fifo bool
	std  *SQSStandardSettings
	fset *SQSFIFOSettings // FIFO only

	queues []sqsQueue
	topic  map[string]string // queue name -> the place's topic (its workload topic, or the DLQ's name)
	polls  map[uint64]*sqsReceiveReq

	recent   [64]int64 // positions of recent receives (candidates for a duplicate)
	nRecent  int
	dupSeed  uint64
	dupPPM   int64
	receives uint64

	fifoFull int64 // FIFO receives that found the in-flight limit reached
}

// sqsQueue is a topic's queue and its dead-letter queue.
type sqsQueue struct {
	topic, name, dlq string
	group            string // the group consuming it
}

// sqsCoverage are the paths the SQS adapter and consumer count.
var sqsCoverage = []string{"duplicate-delivery", "receive-attempt-retry", "sqs-over-limit", "retention"}

func openSQS(s *sim, settings EngineSettings) (Engine, error) {
	a := &sqsEngine{s: s, topic: map[string]string{}, polls: map[uint64]*sqsReceiveReq{}}
	switch set := settings.(type) {
	case *SQSStandardSettings:
		a.std = set
	case *SQSFIFOSettings:
		a.std, a.fset, a.fifo = &set.SQSStandardSettings, set, true
	}
	svc, err := sqs.New(sqs.DefaultConfig())
	if err != nil {
		return nil, err
	}
	a.svc = svc
	suffix := ""
	if a.fifo {
		suffix = ".fifo"
	}
	for _, t := range s.cfg.Topics {
		q := sqsQueue{topic: t.Name, name: t.Name + suffix}
		for _, cs := range s.c.consumers {
			if cs.Topic == t.Name {
				q.group = cs.Group
				break
			}
		}
		arn := ""
		if a.std.RedrivePolicy.MaxReceiveCount > 0 {
			q.dlq = t.Name + "-dlq" + suffix
			if r := svc.CreateQueue(s.cfg.Start, q.dlq, a.attrs("")); r.Err != nil {
				return nil, fmt.Errorf("engine: creating %s: %v", q.dlq, r.Err)
			}
			arn = svc.Config().ARN(q.dlq)
			a.topic[q.dlq] = t.Name + "-dlq"
		}
		if r := svc.CreateQueue(s.cfg.Start, q.name, a.attrs(arn)); r.Err != nil {
			return nil, fmt.Errorf("engine: creating %s: %v", q.name, r.Err)
		}
		a.topic[q.name] = t.Name
		a.queues = append(a.queues, q)
	}
	return a, nil
}

func (a *sqsEngine) attrs(dlq string) map[string]string {
	m := a.std.attributes(a.fifo, dlq)
	if f := a.fset; f != nil {
		m[sqs.AttrContentBasedDeduplication] = strconv.FormatBool(f.ContentBasedDeduplication)
		m[sqs.AttrDeduplicationScope] = f.DeduplicationScope
		m[sqs.AttrFifoThroughputLimit] = f.FifoThroughputLimit
	}
	return m
}

// sqsOf is the run's engine as the SQS adapter (its clients need it).
func (s *sim) sqsOf() *sqsEngine {
	a, ok := s.eng.(*sqsEngine)
	if !ok {
		panic("sim: an SQS consumer on another engine")
	}
	return a
}

// queueOf is the queue of a workload topic.
func (a *sqsEngine) queueOf(topic string) *sqsQueue {
	for i := range a.queues {
		if a.queues[i].topic == topic {
			return &a.queues[i]
		}
	}
	panic("sim: no SQS queue for topic " + topic)
}

func (a *sqsEngine) emit(now clock.Time, e model.Event) { a.s.tr.emitAt(now, e) }

func (a *sqsEngine) Start(now clock.Time, out *Outcome) {}

func (a *sqsEngine) SetFaults(f EngineFaults) { a.dupSeed, a.dupPPM = f.Seed, f.DuplicatePPM }

func (a *sqsEngine) CheckInvariants() error { return a.svc.CheckInvariants() }

// The adapter's timer.
const sqsDue int32 = 0

func (a *sqsEngine) armDue(out *Outcome) {
	if t, ok := a.svc.NextDue(); ok {
		out.arm(sqsDue, t)
	}
}

// Store sends the message (SendMessage; a FIFO queue's with its group and
// its UNIQ_KEY as the deduplication id).
func (a *sqsEngine) Store(now clock.Time, producer int32, m *model.Message, out *Outcome) bool {
	q := a.queueOf(m.Topic)
	req := sqs.SendMessageRequest{Queue: q.name, MsgID: m.ID, MessageBody: []byte(m.UniqKey)}
	if a.fifo {
		req.MessageGroupID = "q" + strconv.Itoa(int(m.QueueID))
		if !a.fset.ContentBasedDeduplication {
			req.MessageDeduplicationID = m.UniqKey
		}
	}
	res := a.svc.SendMessage(now, &req)
	a.effects(now, &res.Effects, nil)
	if res.Err != nil || res.Deduplicated {
		a.emit(now, model.Event{Kind: model.EvProduceFailed, Client: producer, Msg: m.ID, Code: int32(codeOf(res.Err))})
		a.armDue(out)
		return false
	}
	q0 := int32(0)
	if a.fifo {
		q0 = m.QueueID
	}
	a.emit(now, model.Event{Kind: model.EvProduce, Client: producer, Msg: m.ID, Topic: m.Topic, Queue: q0, Offset: res.Seq})
	a.answers(now, &res.Effects, out)
	a.armDue(out)
	return true
}

func codeOf(err *sqs.Error) sqs.Code {
	if err == nil {
		return sqs.OK
	}
	return err.Code
}

// Requests of the SQS consumer.

// sqsReceiveReq is a ReceiveMessage.
type sqsReceiveReq struct {
	reqBase
	req    sqs.ReceiveMessageRequest
	msgs   []sqs.Delivery
	code   sqs.Code
	parked bool
}

// sqsDeleteReq is a DeleteMessage; the SDK retries it when no answer
// comes (sdkRetry).
type sqsDeleteReq struct {
	reqBase
	req     sqs.DeleteMessageRequest
	msg     model.MsgID
	lease   model.LeaseID
	at      clock.Time // delivered at
	attempt int        // the SDK's attempt number, from 1
}

// sqsChangeReq is a ChangeMessageVisibility: a release (0), a retry delay
// or a renewal.
type sqsChangeReq struct {
	reqBase
	req          sqs.ChangeMessageVisibilityRequest
	msg          model.MsgID
	lease        model.LeaseID
	code         sqs.Code
	keepDeadline clock.Time   // the same-deadline edge: ask for the time left to this deadline
	attempt      int          // the SDK's attempt number, from 1
	reason       model.Reason // the renewal's reason in the trace (a retry repeats it)
}

func (r *sqsReceiveReq) lost(e *model.Event, why model.Reason) bool {
	lostReceive(e, why, len(r.msgs))
	return true
}

func (r *sqsDeleteReq) lost(e *model.Event, why model.Reason) bool {
	e.Kind, e.Msg, e.Lease = model.EvAckLost, r.msg, r.lease
	if why == model.RResponse {
		e.Kind = model.EvAckResponseLost
	} else {
		e.Reason = why
	}
	return true
}

func (r *sqsChangeReq) lost(e *model.Event, why model.Reason) bool {
	if r.req.VisibilityTimeout == 0 {
		return false // a release that never arrives leaves the lease to run out
	}
	e.Kind, e.Msg, e.Lease, e.Reason = model.EvRenewLost, r.msg, r.lease, why
	return true
}

func (a *sqsEngine) Serve(now clock.Time, r Request, out *Outcome) {
	switch r := r.(type) {
	case *sqsReceiveReq:
		a.receive(now, r, out)
	case *sqsDeleteReq:
		res := a.svc.DeleteMessage(now, &r.req)
		e := model.Event{Kind: model.EvAcked, Client: r.c.idx, Msg: r.msg, Lease: r.lease, Code: int32(codeOf(res.Err))}
		a.effectsAnswer(now, &res.Effects, &e, func(ev *sqs.Event) bool {
			if ev.Kind != sqs.Deleted || ev.Lease != res.Lease || !res.Deleted {
				return false
			}
			if ev.Ended {
				e.Ended = ev.Lease
			}
			return true
		})
		if res.Deleted {
			a.s.meter.acked(r.c.g, r.msg, r.at, now)
		}
		a.answers(now, &res.Effects, out)
		out.answered(r)
	case *sqsChangeReq:
		if r.keepDeadline != 0 {
			r.req.VisibilityTimeout = int(max(r.keepDeadline.Sub(now)+clock.Second-1, 0) / clock.Second)
		}
		res := a.svc.ChangeMessageVisibility(now, &r.req)
		r.code = codeOf(res.Err)
		e := model.Event{Client: r.c.idx, Msg: r.msg, Lease: r.lease, Code: int32(r.code)}
		if r.req.VisibilityTimeout == 0 {
			e.Kind = model.EvReleased
			if res.Ended {
				e.Ended = res.Lease
			}
		} else {
			e.Kind = model.EvRenewed
			if res.Err == nil {
				e.Next, e.Deadline = res.Lease, res.Deadline
			}
		}
		a.effectsAnswer(now, &res.Effects, &e, func(ev *sqs.Event) bool {
			return res.Err == nil && ev.Lease == res.Lease && (ev.Kind == sqs.MadeVisible || ev.Kind == sqs.Changed)
		})
		a.answers(now, &res.Effects, out)
		out.answered(r)
	default:
		panic("sim: a request the SQS engine does not serve")
	}
	a.armDue(out)
}

// receive serves a ReceiveMessage: the events that came due first, the
// leases it granted (or it parks), then the parked polls the call
// answered.
func (a *sqsEngine) receive(now clock.Time, r *sqsReceiveReq, out *Outcome) {
	req := r.req
	if !a.fifo && a.dupPPM > 0 && a.nRecent > 0 {
		a.receives++
		if h := splitmix64(a.dupSeed ^ splitmix64(a.receives)); int64(h%1_000_000) < a.dupPPM {
			req.DuplicateSeq = a.recent[(h>>20)%uint64(min(a.nRecent, len(a.recent)))]
		}
	}
	res := a.svc.ReceiveMessage(now, &req)
	r.code = codeOf(res.Err)
	if res.Err != nil && res.Err.Code == sqs.OverLimit {
		a.s.cov.hit("sqs-over-limit")
	}
	a.effects(now, &res.Effects, res.Messages)
	if res.Parked {
		a.polls[res.PollID] = r
		if !r.parked {
			r.parked = true
			a.emit(now, model.Event{Kind: model.EvParked, Client: r.c.idx, Topic: a.topic[req.Queue], Queue: -1, Deadline: res.WaitUntil})
		}
	} else {
		a.lend(now, r, res.Messages)
		out.answered(r)
	}
	if a.fifo && len(res.Messages) == 0 && a.atFifoLimit(req.Queue) {
		a.fifoFull++
	}
	a.answers(now, &res.Effects, out)
}

// atFifoLimit reports whether a FIFO queue's in-flight messages reached
// the limit.
func (a *sqsEngine) atFifoLimit(queue string) bool {
	c, ok := a.svc.CountsOf(queue)
	return ok && c.InFlight >= a.svc.Config().FifoInFlightLimit
}

// lend traces the leases of a receive's messages and hands them to it.
func (a *sqsEngine) lend(now clock.Time, r *sqsReceiveReq, msgs []sqs.Delivery) {
	r.msgs = msgs
	for i := range msgs {
		d := &msgs[i]
		a.emit(now, model.Event{Kind: model.EvLease, Client: r.c.idx, Msg: d.MsgID, Lease: d.Lease, Topic: a.topic[d.Queue], Queue: groupQueue(d.MessageGroupID), Offset: d.Seq,
			Attempt: int32(d.ReceiveCount), Deadline: d.Deadline})
		if d.Duplicate {
			a.s.cov.hit("duplicate-delivery")
		}
		if d.Retry {
			a.s.cov.hit("receive-attempt-retry")
		}
		a.recent[a.nRecent%len(a.recent)] = d.Seq
		a.nRecent++
	}
}

// groupQueue is the queue of a place: a FIFO message's group (q3 is 3),
// 0 on a standard queue.
func groupQueue(group string) int32 {
	if n, err := strconv.Atoi(group[min(1, len(group)):]); err == nil {
		return int32(n)
	}
	return 0
}

// answers hands the parked polls a call answered their messages.
func (a *sqsEngine) answers(now clock.Time, fx *sqs.Effects, out *Outcome) {
	for i := range fx.Answers {
		an := &fx.Answers[i]
		r := a.polls[an.PollID]
		if r == nil {
			continue // cancelled: its client crashed
		}
		delete(a.polls, an.PollID)
		a.lend(now, r, an.Messages)
		out.answered(r)
	}
}

// effectsAnswer traces a call's events with its answer e in the engine's
// order: at the event mine recognises as the answer's (a deletion, a
// visibility change), or after the events when there is none (an error,
// a delete that deleted nothing).
func (a *sqsEngine) effectsAnswer(now clock.Time, fx *sqs.Effects, e *model.Event, mine func(*sqs.Event) bool) {
	done := false
	for i := range fx.Events {
		ev := &fx.Events[i]
		if !done && mine(ev) {
			done = true
			a.emit(now, *e)
			continue
		}
		a.event(now, ev, nil)
	}
	if !done {
		a.emit(now, *e)
	}
}

// effects traces what happened inside a call besides its answer. grants
// are the call's own deliveries (a duplicate's lease is what superseded
// the old one).
func (a *sqsEngine) effects(now clock.Time, fx *sqs.Effects, grants []sqs.Delivery) {
	for i := range fx.Events {
		a.event(now, &fx.Events[i], grants)
	}
}

// event traces one engine event (the answers' own are traced with them).
func (a *sqsEngine) event(now clock.Time, ev *sqs.Event, grants []sqs.Delivery) {
	switch ev.Kind {
	case sqs.Expired:
		a.emit(now, model.Event{Kind: model.EvLapse, Client: -1, Msg: ev.MsgID, Lease: ev.Lease})
	case sqs.Superseded:
		e := model.Event{Kind: model.EvLeaseLost, Client: -1, Msg: ev.MsgID, Lease: ev.Lease, Reason: model.RSuperseded}
		for _, d := range grants {
			if d.Duplicate && d.Seq == ev.Seq && d.Queue == ev.Queue {
				e.Next = d.Lease
			}
		}
		a.emit(now, e)
	case sqs.Redriven:
		a.s.cov.hit("dlq")
		a.s.meter.finish(a.s.byName[a.groupOf(ev.Queue)], ev.MsgID)
		q := int32(0)
		if a.fifo {
			for _, mi := range a.svc.Messages(ev.To) {
				if mi.Seq == ev.ToSeq {
					q = groupQueue(mi.GroupID)
				}
			}
		}
		a.emit(now, model.Event{Kind: model.EvDeadLetter, Client: -1, Group: a.groupOf(ev.Queue), Msg: ev.MsgID,
			Topic: a.topic[ev.To], Queue: q, Offset: ev.ToSeq, Reason: model.RRedrive})
	case sqs.RetentionExpired:
		a.s.cov.hit("retention")
		a.s.meter.finish(a.s.byName[a.groupOf(ev.Queue)], ev.MsgID)
		e := model.Event{Kind: model.EvDeadLetter, Client: -1, Group: a.groupOf(ev.Queue), Msg: ev.MsgID, Reason: model.RRetention}
		if ev.Ended {
			e.Lease = ev.Lease
		}
		a.emit(now, e)
	}
	// Deleted, Changed and MadeVisible are the answers to the call;
	// Purged does not happen (nothing purges).
}

// groupOf is the group consuming a queue ("" for a dead-letter queue).
func (a *sqsEngine) groupOf(queue string) string {
	for _, q := range a.queues {
		if q.name == queue {
			return q.group
		}
	}
	return ""
}

func (a *sqsEngine) Tick(now clock.Time, timer int32, out *Outcome) {
	res := a.svc.Tick(now)
	a.effects(now, &res.Effects, nil)
	a.answers(now, &res.Effects, out)
	a.armDue(out)
}

// Disconnect cancels the crashed client's parked poll (SQS cannot know
// the connection is gone; the adapter does). Its leases run out.
func (a *sqsEngine) Disconnect(now clock.Time, c *consumer, out *Outcome) {
	var ids []uint64
	for id, r := range a.polls { // collected, then sorted
		if r.c == c {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		delete(a.polls, id)
		res := a.svc.CancelPoll(now, id)
		a.effects(now, &res.Effects, nil)
		a.answers(now, &res.Effects, out)
	}
	a.armDue(out)
}

// Restart: SQS has no broker to restart (the configuration refuses the
// fault).
func (a *sqsEngine) Restart(clock.Time, *Outcome) {
	panic("sim: a broker restart on the SQS engine (validation refuses it)")
}

// Status: the in-flight messages of the topics' queues, and per queue its
// stored messages as the only position SQS has: Max is how many it still
// holds (visible, in flight or delayed), read and committed 0, so the lag
// is zero exactly when the queue is empty.
func (a *sqsEngine) Status(positions bool, dst []Position) (int, []Position) {
	dst = dst[:0]
	n := 0
	for _, c := range a.svc.Counts() {
		for _, q := range a.queues {
			if q.name != c.Queue {
				continue
			}
			n += c.InFlight
			if positions {
				dst = append(dst, Position{Group: q.group, Topic: q.topic, Max: int64(c.Visible + c.InFlight + c.Delayed)})
			}
		}
	}
	return n, dst
}

// limits are the SQS caps the run hit.
func (a *sqsEngine) limits() []model.LimitHit {
	var out []model.LimitHit
	over := 0
	for _, q := range a.queues {
		if st, ok := a.svc.State(q.name); ok {
			over += st.Stats.OverLimit
		}
	}
	cfg := a.svc.Config()
	if over > 0 {
		out = append(out, model.LimitHit{Engine: string(SQSStandard), Limit: "in-flight messages per standard queue", Value: int64(cfg.StandardInFlightLimit),
			Count: int64(over), What: "receives refused with OverLimit"})
	}
	if a.fifoFull > 0 {
		out = append(out, model.LimitHit{Engine: string(SQSFIFO), Limit: "in-flight messages per FIFO queue", Value: int64(cfg.FifoInFlightLimit),
			Count: a.fifoFull, What: "receives answered empty at the limit"})
	}
	return out
}
