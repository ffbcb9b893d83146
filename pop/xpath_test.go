package pop_test

// The cross-path differential test: the same random operation sequences
// on a KV-path broker and a checkpoint-path broker, comparing what a
// client sees: what each pop returns, the ack and renew answers, and which
// messages come back. RocketMQ's two paths really differ in places; those
// differences are normalised away here, each named in the list below, and
// each is pinned by a scripted test that runs the same commands on both
// paths (testdata/script/xpath_*.txt, docs/rocketmq/checkpoint-path.md
// §13):
//
//   - revive timing: the KV path revives about 0.05-0.55 s after the
//     deadline, the checkpoint path 2-7 s after (xpath_revive.txt). Every
//     comparison happens at a settled time, once both have revived every
//     lease past its deadline.
//   - restNum and the queue order inside a response (xpath_restnum.txt):
//     compared are the messages, as a multiset, not their order or restNum.
//     Pops ask for 32 and a sequence produces at most 16 messages, so both
//     paths return everything available.
//   - handles and lease ids: reviveQid (round robin vs 0), the start offset
//     after an offset correction, lease numbering (xpath_handles.txt).
//   - the retry-first choice: random vs every fifth request, and a
//     specific-queue pop reading the retry topic (xpath_retry.txt).
//     Pops here are all-queue pops for at most 32 messages: the set is
//     the same whichever is read first.
//   - commit offsets (xpath_offsets.txt): not compared.
//   - ack answers: the KV path removes the record, the checkpoint path
//     writes an ack message the revive pairs (Pending) or merges it: both
//     are "accepted" here (xpath_ack.txt), and an ack of an unknown handle
//     writes an orphan ack message on the checkpoint path only.
//   - restarts, write faults and failed revives (xpath_restart.txt,
//     xpath_faults.txt): not in these sequences.
//   - a renewal in its pop's millisecond: on the checkpoint path the new
//     CK would have the old one's merge key when the message starts its
//     batch; the engine moves it to the next free millisecond, so its
//     deadline is 1 ms later than KV's (ck_change.txt). Operations here
//     are 1 ms apart, as real clients are.
//
// Buffer merge is on for both or off for both (the KV cache, the FS
// buffer): either way the outcomes above agree.

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// xpair is one delivery as both paths made it.
type xpair struct {
	key      string
	kv, fs   model.ReceiptHandle
	acked    bool
	renewals int
}

type xharness struct {
	kv, fs *pop.Broker
	now    clock.Time
	// next KV periodic work
	kvRevive, kvCleanup clock.Time
	held                []xpair
	produced            int
	log                 []string
	res                 [2]pop.PopResult
}

const (
	xTopic = "t"
	xGroup = "a"
	xMax   = 16 // messages a sequence produces
)

func newXHarness(seed uint64, r *rand.Rand) (*xharness, error) {
	kvc := pop.KVConfig()
	fsc := pop.DefaultConfig()
	fsc.Seed = seed
	fsc.PopFromRetryProbability = []int32{20, 0, 100}[r.IntN(3)]
	fsc.ReviveQueueNum = []int32{8, 1, 3}[r.IntN(3)]
	merge := r.IntN(2) == 0
	kvc.EnablePopBufferMerge, fsc.EnablePopBufferMerge = merge, merge
	h := &xharness{now: clock.Epoch}
	var err error
	if h.kv, err = pop.New(kvc); err != nil {
		return nil, err
	}
	if h.fs, err = pop.New(fsc); err != nil {
		return nil, err
	}
	for _, b := range []*pop.Broker{h.kv, h.fs} {
		if err := b.CreateTopic(pop.TopicConfig{Name: xTopic, ReadQueueNums: 3, WriteQueueNums: 3}); err != nil {
			return nil, err
		}
		if err := b.CreateGroup(pop.DefaultGroup(xGroup)); err != nil {
			return nil, err
		}
	}
	h.kvRevive, h.kvCleanup = h.now, h.now
	return h, nil
}

// driveTo runs both brokers' periodic work up to t, each on its own
// cadence: the KV revive every ReviveIdleInterval (at once after a full
// page) and the cache cleanup every CacheCleanupInterval; the checkpoint
// services at NextCheckpointTick. Woken parked pops cannot exist: pops
// here do not poll.
func (h *xharness) driveTo(t clock.Time) {
	for {
		next := min(h.kvRevive, h.kvCleanup)
		if n, ok := h.fs.NextCheckpointTick(); ok && n < next {
			next = n
		}
		if next > t {
			break
		}
		h.now = max(h.now, next)
		if h.kvRevive <= h.now {
			r := h.kv.Revive(h.now)
			h.kvRevive = h.now.Add(pop.ReviveIdleInterval * clock.Millisecond)
			if r.FullPage {
				h.kvRevive = h.now
			}
		}
		if h.kvCleanup <= h.now {
			h.kv.CleanupCache(h.now)
			h.kvCleanup = h.now.Add(pop.CacheCleanupInterval * clock.Millisecond)
		}
		if n, ok := h.fs.NextCheckpointTick(); ok && n <= h.now {
			h.fs.CheckpointTick(h.now)
		}
	}
	h.now = max(h.now, t)
}

// expired reports whether a broker still holds a lease past its deadline.
func expired(b *pop.Broker, now clock.Time) bool {
	st := b.State()
	for _, r := range append(st.InFlight, st.Cached...) {
		if r.Record.VisibilityTimeout() <= now.Millis() {
			return true
		}
	}
	for _, l := range st.Checkpoint.Leases {
		if l.Deadline <= now.Millis() {
			return true
		}
	}
	return false
}

// settle drives both brokers for d, then on until neither holds a lease
// past its deadline (the revive-timing difference).
func (h *xharness) settle(d clock.Duration) error {
	h.driveTo(h.now.Add(d))
	for i := 0; expired(h.kv, h.now) || expired(h.fs, h.now); i++ {
		if i > 120 {
			return fmt.Errorf("still a lease past its deadline 60 s after %v", h.now)
		}
		h.driveTo(h.now.Add(500 * clock.Millisecond))
	}
	return nil
}

// delivered is a pop's messages as a sorted multiset of key/reconsume/topic.
func delivered(r *pop.PopResult) []string {
	var out []string
	for _, m := range r.Messages {
		out = append(out, fmt.Sprintf("%s/r%d/%s", m.Message.UniqKey, m.Message.ReconsumeTimes, m.Message.Topic))
	}
	sort.Strings(out)
	return out
}

func (h *xharness) pop(it clock.Duration) error {
	req := pop.PopRequest{ConsumerGroup: xGroup, Topic: xTopic, QueueID: -1, MaxMsgNums: 32, InvisibleTime: it}
	h.kv.Pop(h.now, &req, &h.res[0])
	h.fs.Pop(h.now, &req, &h.res[1])
	k, f := &h.res[0], &h.res[1]
	if k.Code != f.Code || k.Status != f.Status {
		return fmt.Errorf("pop: kv %v/%v, fs %v/%v", k.Code, k.Status, f.Code, f.Status)
	}
	dk, df := delivered(k), delivered(f)
	if strings.Join(dk, " ") != strings.Join(df, " ") {
		return fmt.Errorf("pop delivered\n  kv %v\n  fs %v", dk, df)
	}
	if len(dk) >= 32 {
		return fmt.Errorf("a pop filled its batch: the sequence produced too many copies")
	}
	// pair the deliveries: same key and reconsume count, in order
	used := make([]bool, len(f.Messages))
	for _, m := range k.Messages {
		for j, n := range f.Messages {
			if !used[j] && n.Message.UniqKey == m.Message.UniqKey && n.Message.ReconsumeTimes == m.Message.ReconsumeTimes {
				used[j] = true
				h.held = append(h.held, xpair{key: m.Message.UniqKey, kv: m.Handle, fs: n.Handle})
				break
			}
		}
	}
	return nil
}

func (h *xharness) ack(x *xpair) error {
	ka := pop.NewAckRequest(xGroup, xTopic, &x.kv)
	fa := pop.NewAckRequest(xGroup, xTopic, &x.fs)
	rk, rf := h.kv.Ack(h.now, &ka), h.fs.Ack(h.now, &fa)
	if rk.Code != rf.Code || (rk.Removed != 0) != (rf.Removed != 0 || rf.Pending != 0) {
		return fmt.Errorf("ack of %s: kv %v removed %d, fs %v removed %d pending %d", x.key, rk.Code, rk.Removed, rf.Code, rf.Removed, rf.Pending)
	}
	x.acked = true
	return nil
}

func (h *xharness) change(x *xpair, it clock.Duration) error {
	kr := pop.NewChangeInvisibleTimeRequest(xGroup, xTopic, &x.kv, it)
	fr := pop.NewChangeInvisibleTimeRequest(xGroup, xTopic, &x.fs, it)
	rk, rf := h.kv.ChangeInvisibleTime(h.now, &kr), h.fs.ChangeInvisibleTime(h.now, &fr)
	if rk.Code != rf.Code || rk.Deadline != rf.Deadline {
		return fmt.Errorf("renew of %s: kv %v deadline %v, fs %v deadline %v", x.key, rk.Code, rk.Deadline, rf.Code, rf.Deadline)
	}
	if rk.Code == model.Success {
		x.kv, x.fs = rk.Handle, rf.Handle
		x.renewals++
	}
	return nil
}

// inFlight is the multiset of messages a broker holds leases on that no
// accepted ack settles (a checkpoint lease with an ack message pending is
// settled: the revive will pair it).
func inFlight(b *pop.Broker) []string {
	st := b.State()
	var out []string
	name := func(topic string, qid int32, off int64) string {
		m, _ := b.Message(topic, qid, off)
		return fmt.Sprintf("%s/r%d", m.UniqKey, m.ReconsumeTimes)
	}
	for _, r := range append(st.InFlight, st.Cached...) {
		out = append(out, name(r.Record.TopicID, r.Record.QueueID, r.Record.Offset))
	}
	for _, l := range st.Checkpoint.Leases {
		if !l.AckPending {
			out = append(out, name(l.Topic, l.QueueID, l.Offset))
		}
	}
	sort.Strings(out)
	return out
}

// backlog is what is waiting to be delivered: the normal queues' messages
// and the retry topic's copies, as keys and reconsume counts, sorted.
func retryCopies(b *pop.Broker) []string {
	var out []string
	rt := model.BuildPopRetryTopicV1(xTopic, xGroup)
	for o := b.MinOffset(rt, 0); o >= 0 && o < b.MaxOffset(rt, 0); o++ {
		m, _ := b.Message(rt, 0, o)
		out = append(out, fmt.Sprintf("%s/r%d", m.UniqKey, m.ReconsumeTimes))
	}
	sort.Strings(out)
	return out
}

func (h *xharness) compareSettled() error {
	if a, b := inFlight(h.kv), inFlight(h.fs); strings.Join(a, " ") != strings.Join(b, " ") {
		return fmt.Errorf("in flight after settling\n  kv %v\n  fs %v", a, b)
	}
	if a, b := retryCopies(h.kv), retryCopies(h.fs); strings.Join(a, " ") != strings.Join(b, " ") {
		return fmt.Errorf("retry copies after settling\n  kv %v\n  fs %v", a, b)
	}
	return nil
}

// xstep draws and applies one operation, 1 ms after the previous one:
// the checkpoint path's merge keys carry the pop time in milliseconds, and
// a renewal in its pop's millisecond takes the next one (ck_change.txt).
func (h *xharness) xstep(r *rand.Rand) error {
	h.now = h.now.Add(clock.Millisecond)
	its := []clock.Duration{0, clock.Second, 5 * clock.Second, 30 * clock.Second}
	switch n := r.IntN(20); {
	case n < 4 && h.produced < xMax:
		q := int32(r.IntN(3))
		k := 1 + r.IntN(2)
		h.log = append(h.log, fmt.Sprintf("put %d to queue %d", k, q))
		for i := 0; i < k && h.produced < xMax; i++ {
			h.produced++
			m := &model.Message{Topic: xTopic, QueueID: q, UniqKey: fmt.Sprintf("m%d", h.produced)}
			if a, b := h.kv.Put(h.now, m), h.fs.Put(h.now, m); a.Code != b.Code {
				return fmt.Errorf("put: kv %v, fs %v", a.Code, b.Code)
			}
		}
	case n < 9:
		it := its[r.IntN(len(its))]
		h.log = append(h.log, fmt.Sprintf("pop it=%v", it))
		return h.pop(it)
	case n < 13 && len(h.held) > 0:
		x := &h.held[r.IntN(len(h.held))]
		h.log = append(h.log, fmt.Sprintf("ack %s (renewed %d, acked before %v)", x.key, x.renewals, x.acked))
		return h.ack(x)
	case n < 15 && len(h.held) > 0:
		x := &h.held[r.IntN(len(h.held))]
		it := its[r.IntN(len(its))]
		h.log = append(h.log, fmt.Sprintf("renew %s it=%v (acked %v)", x.key, it, x.acked))
		return h.change(x, it)
	default:
		d := []clock.Duration{clock.Second, 3 * clock.Second, 10 * clock.Second, 40 * clock.Second}[r.IntN(4)]
		h.log = append(h.log, fmt.Sprintf("settle %v", d))
		if err := h.settle(d); err != nil {
			return err
		}
		return h.compareSettled()
	}
	return nil
}

// drain pops and acks until both brokers are empty, then checks every
// produced message was delivered on both.
func (h *xharness) drain() error {
	for i := 0; i < 40; i++ {
		if err := h.settle(time1s); err != nil {
			return err
		}
		if err := h.pop(5 * clock.Second); err != nil {
			return err
		}
		for j := range h.held {
			if !h.held[j].acked {
				if err := h.ack(&h.held[j]); err != nil {
					return err
				}
			}
		}
		if len(inFlight(h.kv))+len(inFlight(h.fs)) == 0 && len(h.res[0].Messages) == 0 {
			break
		}
		if err := h.settle(10 * clock.Second); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, x := range h.held {
		seen[x.key] = true
	}
	if len(seen) != h.produced {
		return fmt.Errorf("drained: %d of %d messages delivered", len(seen), h.produced)
	}
	return h.compareSettled()
}

const time1s = clock.Second

func runXSequence(seed uint64, nops int, counts map[string]int) string {
	r := rand.New(rand.NewPCG(seed, 0x7870617468))
	h, err := newXHarness(seed, r)
	if err != nil {
		return err.Error()
	}
	for i := 0; i < nops; i++ {
		if err := h.xstep(r); err != nil {
			return fmt.Sprintf("seed %d, op %d: %v\nops:\n  %s\nreplay: go test ./pop -run TestCrossPath -xpath.seed %d", seed, i, err, strings.Join(h.log, "\n  "), seed)
		}
	}
	if err := h.drain(); err != nil {
		return fmt.Sprintf("seed %d, drain: %v\nops:\n  %s\nreplay: go test ./pop -run TestCrossPath -xpath.seed %d", seed, err, strings.Join(h.log, "\n  "), seed)
	}
	for _, l := range h.log {
		counts[strings.Fields(l)[0]]++
	}
	counts["delivered"] += len(h.held)
	return ""
}

var (
	xpathSeqs = flag.Int("xpath.seqs", 300, "random sequences the cross-path test runs")
	xpathOps  = flag.Int("xpath.ops", 120, "operations per cross-path sequence")
	xpathSeed = flag.Uint64("xpath.seed", 0, "run only this cross-path sequence seed")
)

func TestCrossPath(t *testing.T) {
	seeds := make([]uint64, 0, *xpathSeqs)
	for s := uint64(1); s <= uint64(*xpathSeqs); s++ {
		seeds = append(seeds, s)
	}
	if *xpathSeed != 0 {
		seeds = []uint64{*xpathSeed}
	}
	counts := map[string]int{}
	for _, s := range seeds {
		if msg := runXSequence(s, *xpathOps, counts); msg != "" {
			t.Fatal(msg)
		}
	}
	t.Logf("%d sequences x %d ops; ops by kind: %v", len(seeds), *xpathOps, counts)
}
