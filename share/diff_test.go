package share_test

// The differential test: random operation sequences run against the engine
// (share.Broker) and the plain reference (share/internal/ref); after every
// operation their results and observable state must be identical and the
// engine's invariants must hold. The harness, the operation generators and
// the comparison are shared with the rapid state machine in prop_test.go.

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"popsim/clock"
	"popsim/model"
	"popsim/share"
	"popsim/share/internal/ref"
)

var (
	diffSeqs = flag.Int("diff.seqs", 120, "random sequences the differential test runs")
	diffFrom = flag.Uint64("diff.from", 1, "first sequence seed")
	diffOps  = flag.Int("diff.ops", 200, "operations per sequence")
	diffSeed = flag.Uint64("diff.seed", 0, "run only this sequence seed (0: seeds diff.from.. diff.from+diff.seqs-1)")
)

// broker is what the engine and the reference both offer.
type broker interface {
	CreateTopic(string, int32) error
	SetGroupConfig(string, share.GroupConfig) error
	Produce(clock.Time, share.ProduceRequest) share.ProduceResult
	DeleteRecords(share.TopicPartition, int64) error
	Heartbeat(clock.Time, share.HeartbeatRequest) share.HeartbeatResult
	ShareFetch(clock.Time, share.ShareFetchRequest) share.ShareFetchResult
	ShareAcknowledge(clock.Time, share.ShareAcknowledgeRequest) share.ShareAcknowledgeResult
	CloseSession(clock.Time, string, string) share.SessionCloseResult
	Tick(clock.Time) share.TickResult
	NextDeadline() (clock.Time, bool)
	Restart(clock.Time) share.RestartResult
	SetPersisterFault(share.PersisterFault)

	Stats() share.Stats
	NextLease() model.LeaseID
	GroupConfig(string) share.GroupConfig
	LogStartOffset(share.TopicPartition) int64
	LogEndOffset(share.TopicPartition) int64
	Record(share.TopicPartition, int64) *model.Message
	State() []share.SharePartitionState
	Records(string, share.TopicPartition) []share.RecordInfo
	Batches(string, share.TopicPartition) []share.CachedBatch
	Groups() []share.GroupState
	Sessions() []share.SessionState
}

var (
	_ broker = (*share.Broker)(nil)
	_ broker = (*ref.Broker)(nil)
)

// The world every sequence runs in.
var (
	topics = []struct {
		name string
		n    int32
	}{{"t", 2}, {"u", 1}, {"dlq.t", 1}}
	allTPs  = []share.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}, {Topic: "u", Partition: 0}}
	groups  = []string{"g", "h"}
	members = []string{"m1", "m2", "m3"}
)

// chooser draws either from a seeded math/rand/v2 source (the differential
// test) or through rapid (the state machine), so both share the generators.
type chooser struct {
	r *rand.Rand
	t *rapid.T
}

func pick[T any](c chooser, label string, xs ...T) T {
	if c.t != nil {
		return rapid.SampledFrom(xs).Draw(c.t, label)
	}
	return xs[c.r.IntN(len(xs))]
}

// between draws from [lo, hi].
func between(c chooser, label string, lo, hi int64) int64 {
	if c.t != nil {
		return rapid.Int64Range(lo, hi).Draw(c.t, label)
	}
	return lo + c.r.Int64N(hi-lo+1)
}

// genConfig draws a swarm configuration.
func genConfig(c chooser) share.Config {
	cfg := share.DefaultConfig()
	cfg.DeliveryCountLimit = pick(c, "cfg.deliveryCountLimit", int32(5), 2, 3, 4)
	cfg.PartitionMaxRecordLocks = pick(c, "cfg.partitionMaxRecordLocks", int32(100), 100, 2000)
	cfg.MaxShareSessions = pick(c, "cfg.maxShareSessions", int32(2000), 2000, 2)
	cfg.MaxSize = pick(c, "cfg.maxSize", int32(200), 200, 2)
	cfg.Group.AutoOffsetReset = pick(c, "cfg.autoOffsetReset", share.ResetEarliest, share.ResetEarliest, share.ResetLatest)
	cfg.Group.RenewAcknowledgeEnable = pick(c, "cfg.renewAcknowledgeEnable", true, true, false)
	cfg.Bugs.DecrementDeliveryCountOnSessionRelease = pick(c, "bug.decrementDeliveryCountOnSessionRelease", false, false, false, true)
	return cfg
}

// genGroupConfig draws group h's configuration (g runs the broker's).
func genGroupConfig(c chooser, cfg share.Config) share.GroupConfig {
	gc := cfg.Group
	gc.RecordLockDurationMs = pick(c, "h.lockMs", int32(0), 15000, 60000)
	gc.DeliveryCountLimit = pick(c, "h.deliveryCountLimit", int32(0), 2, 6)
	gc.DeadLetterTopic = pick(c, "h.dlq", "", "dlq.t", "dlq.none")
	gc.DeadLetterCopyRecord = pick(c, "h.dlqCopy", false, true)
	gc.AutoOffsetReset = share.ResetEarliest
	return gc
}

type mkey struct{ group, member string }

// held is a delivery a client holds.
type held struct {
	mkey
	tp     share.TopicPartition
	offset int64
}

// harness drives the engine and the reference in lockstep.
type harness struct {
	eng     *share.Broker
	ref     *ref.Broker
	now     clock.Time
	nextMsg model.MsgID
	epochs  map[mkey]int32 // member epochs as the clients know them
	session map[mkey]int32 // session epochs the clients would send
	held    []held
	ops     []string
	// live are the leases granted and not yet ended, by the engine's
	// results alone: the identity contract the simulator's checker uses.
	live      map[model.LeaseID]bool
	nextLease model.LeaseID
}

func newHarness(c chooser) (*harness, error) {
	cfg := genConfig(c)
	gc := genGroupConfig(c, cfg)
	eng, err := share.New(cfg)
	if err != nil {
		return nil, err
	}
	r, err := ref.New(cfg)
	if err != nil {
		return nil, err
	}
	h := &harness{eng: eng, ref: r, now: clock.Epoch, nextMsg: 1, epochs: map[mkey]int32{}, session: map[mkey]int32{},
		live: map[model.LeaseID]bool{}, nextLease: 1}
	for _, b := range []broker{eng, r} {
		for _, t := range topics {
			if err := b.CreateTopic(t.name, t.n); err != nil {
				return nil, err
			}
		}
		if err := b.SetGroupConfig("h", gc); err != nil {
			return nil, err
		}
	}
	h.ops = append(h.ops, fmt.Sprintf("config %+v / h %+v", cfg, gc))
	return h, nil
}

// op is one fully resolved operation.
type op struct {
	name    string
	text    string
	produce share.ProduceRequest
	hb      share.HeartbeatRequest
	fetch   share.ShareFetchRequest
	ack     share.ShareAcknowledgeRequest
	mk      mkey
	dt      clock.Duration
	tp      share.TopicPartition
	offset  int64
	fault   share.PersisterFault
}

func (o op) String() string { return o.name + " " + o.text }

var cmpOpts = []cmp.Option{cmpopts.EquateEmpty()}

// diff is cmp.Diff (-ref +engine) after a fast reflect.DeepEqual: DeepEqual
// is stricter (nil versus empty), so only its failures pay for cmp.
func diff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	slowDiffs++
	return cmp.Diff(want, got, cmpOpts...)
}

// slowDiffs counts comparisons DeepEqual could not settle.
var slowDiffs int

// both runs f on the engine and on the reference and diffs the results.
func (h *harness) both(what string, f func(b broker) any) (any, error) {
	got, want := f(h.eng), f(h.ref)
	if d := diff(want, got); d != "" {
		return got, fmt.Errorf("%s result differs (-ref +engine):\n%s", what, d)
	}
	return got, nil
}

func cloneMsgs(ms []*model.Message) []*model.Message {
	out := make([]*model.Message, len(ms))
	for i, m := range ms {
		out[i] = m.Clone()
	}
	return out
}

func (h *harness) apply(o op) error {
	switch o.name {
	case "produce":
		_, err := h.both("produce", func(b broker) any {
			r := o.produce
			r.Records = cloneMsgs(o.produce.Records)
			return b.Produce(h.now, r)
		})
		return err
	case "heartbeat":
		got, err := h.both("heartbeat", func(b broker) any { return b.Heartbeat(h.now, o.hb) })
		if r := got.(share.HeartbeatResult); r.Err == share.None {
			if r.MemberEpoch < 0 {
				delete(h.epochs, o.mk)
			} else {
				h.epochs[o.mk] = r.MemberEpoch
			}
		}
		return err
	case "fetch":
		got, err := h.both("fetch", func(b broker) any { return b.ShareFetch(h.now, o.fetch) })
		r := got.(share.ShareFetchResult)
		if err == nil {
			err = h.leases(r.Deliveries, r.Renewed, r.Ended)
		}
		if r.Err == share.None {
			h.sent(o.mk, o.fetch.ShareSessionEpoch)
			for _, d := range r.Deliveries {
				h.keep(held{o.mk, d.TopicPartition, d.Offset})
			}
		}
		return err
	case "ack":
		got, err := h.both("ack", func(b broker) any { return b.ShareAcknowledge(h.now, o.ack) })
		if r := got.(share.ShareAcknowledgeResult); err == nil {
			err = h.leases(nil, r.Renewed, r.Ended)
		}
		if got.(share.ShareAcknowledgeResult).Err == share.None {
			h.sent(o.mk, o.ack.ShareSessionEpoch)
		}
		return err
	case "close":
		got, err := h.both("close", func(b broker) any { return b.CloseSession(h.now, o.mk.group, o.mk.member) })
		if err == nil {
			err = h.leases(nil, nil, got.(share.SessionCloseResult).Ended)
		}
		delete(h.session, o.mk)
		return err
	case "advance":
		h.now = h.now.Add(o.dt)
		return nil
	case "tick":
		got, err := h.both("tick", func(b broker) any { return b.Tick(h.now) })
		if err == nil {
			err = h.leases(nil, nil, got.(share.TickResult).Ended)
		}
		for _, x := range got.(share.TickResult).Expired {
			delete(h.epochs, mkey{x.Group, x.Member})
		}
		return err
	case "tickNext":
		t, ok := h.eng.NextDeadline()
		if ok && t > h.now {
			h.now = t
		}
		got, err := h.both("tickNext", func(b broker) any { return b.Tick(h.now) })
		if err == nil {
			err = h.leases(nil, nil, got.(share.TickResult).Ended)
		}
		return err
	case "restart":
		got, err := h.both("restart", func(b broker) any { return b.Restart(h.now) })
		h.session = map[mkey]int32{}
		if err == nil {
			err = h.leases(nil, nil, got.(share.RestartResult).Lost)
		}
		return err
	case "delete":
		_, err := h.both("delete", func(b broker) any { return b.DeleteRecords(o.tp, o.offset) == nil })
		return err
	case "fault":
		h.eng.SetPersisterFault(o.fault)
		h.ref.SetPersisterFault(o.fault)
		return nil
	}
	panic("unknown op " + o.name)
}

// leases applies one result to the lease ledger: deliveries grant the next
// lease ids in order, renewals and ends name live leases, each lease ends
// once.
func (h *harness) leases(ds []share.Delivery, rs []share.Renewal, es []share.LeaseEvent) error {
	// Within one result renewals come first (acknowledgements), then ends
	// (acknowledgements, then a final-epoch session close), then the
	// fetch's deliveries.
	for _, r := range rs {
		if !h.live[r.Lease] {
			return fmt.Errorf("lease %d renewed but is not live", r.Lease)
		}
	}
	for _, e := range es {
		if !h.live[e.Lease] {
			return fmt.Errorf("lease %d ended (%v) but is not live", e.Lease, e.End)
		}
		delete(h.live, e.Lease)
	}
	for _, d := range ds {
		if d.Lease != h.nextLease {
			return fmt.Errorf("delivery with lease %d, want %d", d.Lease, h.nextLease)
		}
		h.live[d.Lease] = true
		h.nextLease++
	}
	return nil
}

// checkLeases compares the ledger with the engine: the live leases are
// exactly the leases of the ACQUIRED records.
func (h *harness) checkLeases() error {
	acquired := map[model.LeaseID]bool{}
	for _, g := range groups {
		for _, tp := range allTPs {
			for _, r := range h.eng.Records(g, tp) {
				if r.State == share.Acquired {
					acquired[r.Lease] = true
				}
			}
		}
	}
	if len(acquired) != len(h.live) {
		return fmt.Errorf("%d live leases by the results, %d ACQUIRED records", len(h.live), len(acquired))
	}
	for l := range h.live {
		if !acquired[l] {
			return fmt.Errorf("lease %d is live by the results but no record holds it", l)
		}
	}
	return nil
}

// sent records the session epoch a client sends next after a success.
func (h *harness) sent(k mkey, epoch int32) {
	if epoch == -1 {
		delete(h.session, k)
		return
	}
	h.session[k] = epoch + 1
}

func (h *harness) keep(x held) {
	h.held = append(h.held, x)
	if len(h.held) > 300 {
		h.held = h.held[len(h.held)-300:]
	}
}

// step applies one operation to both brokers and compares the results,
// then the observable state, then checks the engine's invariants.
func (h *harness) step(o op) (err error) {
	h.ops = append(h.ops, o.String())
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	if err := h.apply(o); err != nil {
		return err
	}
	if d := diff(snap(h.ref), snap(h.eng)); d != "" {
		return fmt.Errorf("state after %s differs (-ref +engine):\n%s", o.name, d)
	}
	if err := h.checkLeases(); err != nil {
		return err
	}
	return h.eng.CheckInvariants()
}

// state is everything observable about a broker between operations.
type state struct {
	Stats     share.Stats
	NextLease model.LeaseID
	Next      clock.Time
	NextOK    bool
	SPs       []share.SharePartitionState
	Records   map[string][]share.RecordInfo
	Batches   map[string][]share.CachedBatch
	Groups    []share.GroupState
	Sessions  []share.SessionState
	Logs      map[string][2]int64
	DLQ       []*model.Message
}

func snap(b broker) state {
	s := state{Stats: b.Stats(), NextLease: b.NextLease(), SPs: b.State(), Groups: b.Groups(), Sessions: b.Sessions(),
		Records: map[string][]share.RecordInfo{}, Batches: map[string][]share.CachedBatch{}, Logs: map[string][2]int64{}}
	s.Next, s.NextOK = b.NextDeadline()
	for _, g := range groups {
		for _, tp := range allTPs {
			k := g + "/" + tp.String()
			s.Records[k] = b.Records(g, tp)
			s.Batches[k] = b.Batches(g, tp)
		}
	}
	for _, tp := range append(allTPs, share.TopicPartition{Topic: "dlq.t", Partition: 0}) {
		s.Logs[tp.String()] = [2]int64{b.LogStartOffset(tp), b.LogEndOffset(tp)}
	}
	dlq := share.TopicPartition{Topic: "dlq.t", Partition: 0}
	for off := int64(0); off < b.LogEndOffset(dlq); off++ {
		s.DLQ = append(s.DLQ, b.Record(dlq, off))
	}
	return s
}

// ---- generators ----

func pickMember(c chooser, label string) mkey {
	return mkey{pick(c, label+".group", groups...), pick(c, label+".member", members...)}
}

func genProduce(c chooser, h *harness) op {
	tp := pick(c, "produce.tp", allTPs...)
	if pick(c, "produce.bad", false, false, false, false, false, false, false, false, false, true) {
		tp = share.TopicPartition{Topic: "t", Partition: 7}
	}
	n := pick(c, "produce.n", 1, 1, 1, 2, 3, 5, 40)
	o := op{name: "produce", produce: share.ProduceRequest{TopicPartition: tp}}
	for i := 0; i < n; i++ {
		o.produce.Records = append(o.produce.Records, &model.Message{ID: h.nextMsg, UniqKey: fmt.Sprintf("k%d", h.nextMsg), Body: []byte("b")})
		h.nextMsg++
	}
	o.text = fmt.Sprintf("%s x%d", tp, n)
	return o
}

func genHeartbeat(c chooser, h *harness) op {
	k := pickMember(c, "hb")
	req := share.HeartbeatRequest{GroupID: k.group, MemberID: k.member, MemberEpoch: h.epochs[k]}
	switch pick(c, "hb.variant", "ok", "ok", "ok", "ok", "ok", "join", "leave", "stale", "topics", "bad") {
	case "join":
		req.MemberEpoch = 0
	case "leave":
		req.MemberEpoch = -1
	case "stale":
		req.MemberEpoch = max(h.epochs[k]-1, 1)
	case "bad":
		req.MemberID = ""
	}
	if req.MemberEpoch == 0 || pick(c, "hb.resubscribe", false, false, false, false, true) {
		req.SubscribedTopicNames = pick(c, "hb.topics", []string{"t"}, []string{"t"}, []string{"t", "u"}, []string{"u"}, []string{"nope"})
	}
	return op{name: "heartbeat", hb: req, mk: k, text: fmt.Sprintf("%+v", req)}
}

// sessionEpoch draws the epoch a request carries: usually what the client
// would send.
func sessionEpoch(c chooser, h *harness, k mkey, label string) int32 {
	cur := h.session[k]
	return pick(c, label, cur, cur, cur, cur, cur, cur, cur, 0, -1, cur+3)
}

// genAcks builds acknowledgements for records a client holds: mostly a
// clean request (consecutive offsets with one type become one range, so
// whole in-flight batches get acknowledged at once), sometimes one defect.
func genAcks(c chooser, h *harness, k mkey, label string) ([]share.PartitionAcks, bool) {
	// Mostly the records k holds right now (as the engine says), sometimes
	// stale or foreign deliveries.
	var mine []held
	if pick(c, label+".source", "live", "live", "live", "live", "held") == "live" {
		for _, tp := range allTPs {
			for _, r := range h.eng.Records(k.group, tp) {
				if r.State == share.Acquired && (r.Member == k.member || pick(c, label+".foreign", false, false, false, false, false, false, false, false, false, true)) {
					mine = append(mine, held{k, tp, r.Offset})
				}
			}
		}
	} else {
		for _, x := range h.held {
			if x.mkey == k {
				mine = append(mine, x)
			}
		}
	}
	if len(mine) == 0 {
		return nil, false
	}
	n := between(c, label+".n", 1, min(int64(len(mine)), 40))
	start := between(c, label+".start", 0, int64(len(mine))-n)
	t := pick(c, label+".type", share.AckAccept, share.AckAccept, share.AckAccept, share.AckRelease, share.AckReject, share.AckRenew, share.AckGap)
	renew := t == share.AckRenew
	var out []share.PartitionAcks
	for _, x := range mine[start : start+n] {
		if pick(c, label+".switch", false, false, false, true) {
			t = pick(c, label+".type2", share.AckAccept, share.AckRelease, share.AckReject, share.AckRenew)
			renew = renew || t == share.AckRenew
		}
		if m := len(out); m > 0 && out[m-1].TopicPartition == x.tp {
			bs := out[m-1].Batches
			if last := &bs[len(bs)-1]; last.LastOffset+1 == x.offset && last.Types[0] == t {
				last.LastOffset++
				continue
			}
			out[m-1].Batches = append(bs, share.AckBatch{FirstOffset: x.offset, LastOffset: x.offset, Types: []share.AckType{t}})
			continue
		}
		out = append(out, share.PartitionAcks{TopicPartition: x.tp, Batches: []share.AckBatch{{FirstOffset: x.offset, LastOffset: x.offset, Types: []share.AckType{t}}}})
	}
	pa := &out[between(c, label+".which", 0, int64(len(out))-1)]
	ab := &pa.Batches[between(c, label+".whichBatch", 0, int64(len(pa.Batches))-1)]
	switch pick(c, label+".defect", "none", "none", "none", "none", "none", "none", "perOffset", "inverted", "wide", "badType", "renewFlag", "typesLength", "duplicate") {
	case "perOffset":
		ab.Types = nil
		for o := ab.FirstOffset; o <= ab.LastOffset; o++ {
			tt := pick(c, label+".offsetType", share.AckAccept, share.AckRelease, share.AckReject, share.AckRenew)
			renew = renew || tt == share.AckRenew
			ab.Types = append(ab.Types, tt)
		}
	case "inverted":
		ab.FirstOffset = ab.LastOffset + 1
	case "wide":
		ab.FirstOffset = max(0, ab.FirstOffset-between(c, label+".back", 0, 50))
		ab.LastOffset += between(c, label+".fwd", 0, 50)
	case "badType":
		ab.Types = []share.AckType{9}
	case "renewFlag":
		renew = !renew
	case "typesLength":
		ab.Types = []share.AckType{share.AckAccept, share.AckAccept}
		ab.LastOffset = ab.FirstOffset + 3
	case "duplicate":
		out = append(out, *pa)
	}
	return out, renew
}

func genFetch(c chooser, h *harness) op {
	k := pickSessionMember(c, h, "fetch")
	req := share.ShareFetchRequest{GroupID: k.group, MemberID: k.member, ShareSessionEpoch: sessionEpoch(c, h, k, "fetch.epoch"),
		MaxRecords: pick(c, "fetch.max", int32(500), 500, 1, 2, 5, 10), BatchSize: pick(c, "fetch.batch", int32(500), 500, 1, 3, 0),
		AcquireMode: pick(c, "fetch.mode", share.BatchOptimized, share.BatchOptimized, share.RecordLimit)}
	switch pick(c, "fetch.parts", "assigned", "assigned", "all", "one", "none") {
	case "assigned":
		for _, g := range h.eng.Groups() {
			for _, m := range g.Members {
				if g.ID == k.group && m.ID == k.member {
					req.Partitions = m.Assignment
				}
			}
		}
	case "all":
		req.Partitions = []share.TopicPartition{allTPs[2], allTPs[0], allTPs[1], {Topic: "nope", Partition: 0}}
	case "one":
		req.Partitions = []share.TopicPartition{pick(c, "fetch.tp", allTPs...)}
	}
	if req.ShareSessionEpoch == -1 && pick(c, "fetch.finalClean", true, true, false) {
		req.Partitions = nil
	}
	if pick(c, "fetch.acks", false, false, true) {
		req.Acks, req.IsRenewAck = genAcks(c, h, k, "fetch.ack")
		if req.IsRenewAck && pick(c, "fetch.renewClean", true, true, false) {
			req.MaxRecords = 0
		}
	}
	return op{name: "fetch", fetch: req, mk: k, text: fmt.Sprintf("%+v", req)}
}

// pickSessionMember prefers a member with an open session.
func pickSessionMember(c chooser, h *harness, label string) mkey {
	var open []mkey
	for _, g := range groups {
		for _, m := range members {
			if _, ok := h.session[mkey{g, m}]; ok {
				open = append(open, mkey{g, m})
			}
		}
	}
	if len(open) == 0 || pick(c, label+".any", false, false, false, true) {
		return pickMember(c, label)
	}
	return pick(c, label+".open", open...)
}

func genAck(c chooser, h *harness) op {
	k := pickSessionMember(c, h, "ack")
	req := share.ShareAcknowledgeRequest{GroupID: k.group, MemberID: k.member, ShareSessionEpoch: sessionEpoch(c, h, k, "ack.epoch")}
	req.Acks, req.IsRenewAck = genAcks(c, h, k, "ack")
	return op{name: "ack", ack: req, mk: k, text: fmt.Sprintf("%+v", req)}
}

func genClose(c chooser, _ *harness) op {
	k := pickMember(c, "close")
	return op{name: "close", mk: k, text: fmt.Sprintf("%v", k)}
}

func genAdvance(c chooser, _ *harness) op {
	ms := pick(c, "advance.ms", int64(1), 100, 1000, 5000, 15000, 30000, 45000)
	return op{name: "advance", dt: clock.MillisDuration(ms), text: fmt.Sprintf("%dms", ms)}
}

func genDelete(c chooser, h *harness) op {
	tp := pick(c, "delete.tp", allTPs...)
	lo, hi := h.eng.LogStartOffset(tp), h.eng.LogEndOffset(tp)
	off := between(c, "delete.offset", lo, hi+1)
	return op{name: "delete", tp: tp, offset: off, text: fmt.Sprintf("%s below %d", tp, off)}
}

func genFault(c chooser, _ *harness) op {
	f := share.PersisterFault{Group: pick(c, "fault.group", groups...), Topic: pick(c, "fault.topic", "", "t", "u"),
		Partition: pick(c, "fault.partition", int32(-1), 0, 1), Count: pick(c, "fault.count", 0, 0, 1, 2, -1),
		Err: pick(c, "fault.err", share.CoordinatorNotAvailable, share.FencedStateEpoch, share.UnknownServerError)}
	return op{name: "fault", fault: f, text: fmt.Sprintf("%+v", f)}
}

func simple(name string) func(chooser, *harness) op {
	return func(chooser, *harness) op { return op{name: name} }
}

// actions lists every operation with its weight.
var actions = []struct {
	name   string
	weight int
	gen    func(chooser, *harness) op
}{
	{"produce", 10, genProduce},
	{"heartbeat", 8, genHeartbeat},
	{"fetch", 16, genFetch},
	{"ack", 14, genAck},
	{"close", 2, genClose},
	{"advance", 8, genAdvance},
	{"tick", 4, simple("tick")},
	{"tickNext", 4, simple("tickNext")},
	{"restart", 1, simple("restart")},
	{"delete", 1, genDelete},
	{"fault", 2, genFault},
}

func genOp(r *rand.Rand, h *harness) op {
	total := 0
	for _, a := range actions {
		total += a.weight
	}
	n := r.IntN(total)
	for _, a := range actions {
		if n -= a.weight; n < 0 {
			return a.gen(chooser{r: r}, h)
		}
	}
	panic("unreachable")
}

// runSequence runs one seeded sequence and returns a failure report, or "".
// It adds the engine's counters to total.
func runSequence(seed uint64, nops int, counts map[string]int, total *share.Stats) string {
	r := rand.New(rand.NewPCG(seed, 0x7368617265646966))
	h, err := newHarness(chooser{r: r})
	if err != nil {
		return fmt.Sprintf("seed %d: %v", seed, err)
	}
	for i := 0; i < nops; i++ {
		o := genOp(r, h)
		counts[o.name]++
		if err := h.step(o); err != nil {
			return fmt.Sprintf("seed %d, op %d (%s): %v\nops so far:\n  %s\nreplay: go test ./share -run TestDifferential -diff.seed %d",
				seed, i, o, err, strings.Join(h.ops, "\n  "), seed)
		}
	}
	addStats(total, h.eng.Stats())
	return ""
}

// addStats adds every counter of s to total.
func addStats(total *share.Stats, s share.Stats) {
	tv, sv := reflect.ValueOf(total).Elem(), reflect.ValueOf(s)
	for i := 0; i < tv.NumField(); i++ {
		tv.Field(i).SetInt(tv.Field(i).Int() + sv.Field(i).Int())
	}
}

func TestDifferential(t *testing.T) {
	seeds := make([]uint64, 0, *diffSeqs)
	for s := *diffFrom; s < *diffFrom+uint64(*diffSeqs); s++ {
		seeds = append(seeds, s)
	}
	if *diffSeed != 0 {
		seeds = []uint64{*diffSeed}
	}
	counts := map[string]int{}
	var total share.Stats
	for _, s := range seeds {
		if msg := runSequence(s, *diffOps, counts, &total); msg != "" {
			t.Fatal(msg)
		}
	}
	t.Logf("%d sequences (seeds %d..%d) x %d ops; ops by kind: %v", len(seeds), seeds[0], seeds[len(seeds)-1], *diffOps, counts)
	t.Logf("engine counters over all sequences: %+v (%d comparisons needed cmp)", total, slowDiffs)
}
