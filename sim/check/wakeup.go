package check

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"popsim/clock"
	"popsim/model"
)

// A message that becomes visible for a group's topic while one of the
// group's receives on that topic is parked must be lent to the group, or a
// parked receive answered, within the slack (long polling's promise).

// pollReq is a receive parked on a topic and queue (-1 = all queues). A
// receive may park on several queues at once (a Kafka share fetch on
// each of its partitions): its parked entries share rid, and one answer
// removes them all. Its two int32s side by side: 40 bytes, not 48.
type pollReq struct {
	topic string
	rid   uint64
	// t is the topicWait of (grp, topic), looked up when the receive
	// parked; used while the client's group is still grp (waitOf).
	t     *topicWait
	queue int32
	grp   int32
}

// waitKey is one group's waiting on one topic.
type waitKey struct {
	group int32
	topic string
}

// topicWait counts the parked receives of a group on one topic. gen moves
// whenever the group is served on the topic (a lease, an answer to a
// parked receive, nobody left waiting): obligations made before are met.
type topicWait struct {
	key     waitKey // whose waiting, on which topic
	all     int
	byQueue map[int32]int
	// paused counts parked receives of paused clients: the engine may wake
	// one of them for an arrival, and its answer is written only when the
	// client resumes, so no arrival is judged meanwhile.
	paused int
	gen    uint64
}

func (w *topicWait) waiting() int {
	n := w.all
	for _, k := range w.byQueue { // counting only
		n += k
	}
	return n
}

// obligation: a message became visible at `at` while a matching receive
// of w's group was parked on w's topic; by at plus the slack (deadline)
// the group must be served on the topic.
type obligation struct {
	w   *topicWait
	gen uint64
	msg model.MsgID
	seq int64
	at  clock.Time
	// oq: the message's orderly queue (nil: not orderly). The wakeup is
	// owed only while that queue stays unblocked and the message available
	// there: a renewal that blocks it again in the same call takes the
	// message back and hides the rest once more.
	oq *orderQueue
}

type wakeup struct {
	slack  clock.Duration
	cls    []waitClient          // by client index
	neg    map[int32]*waitClient // clients below 0 (a malformed trace)
	topics map[waitKey]*topicWait
	// last is, by group index, the topicWait the group last found in
	// topics (find): a group mostly waits on one topic, and its entry,
	// once made, stays in topics. lastMsg is the same for the lookups by
	// a message's topic (arrival, a lease: findMsg): the producers' topic
	// strings are not the consumers', and comparing two copies of a name
	// costs a byte-wise comparison where one string compared with itself
	// does not.
	last, lastMsg []lastWait
	obls          oblQueue
	// due is the deadline of obls' first, the first to be judged; the
	// latest time when none is queued.
	due clock.Time
}

// oblQueue is the obligations waiting for their deadline, oldest first,
// in a ring: a power of two in length, doubled when full. (A slice
// consumed from its front and compacted once half of it was consumed
// moved over memory twice the size of what it held, and copied what it
// held at each compaction: 17.6 k LL read and 18.1 k write misses of the
// hot topic's, callgrind.) The slots it passed keep what they held.
type oblQueue struct {
	ring    []obligation
	head, n int
}

// oblRoom is the ring's first length.
const oblRoom = 64

// add makes room at the back for an obligation, which the caller writes
// whole there (an obligation passed in was built on the stack and copied
// in: it holds pointers).
func (q *oblQueue) add() *obligation {
	if q.n == len(q.ring) {
		q.grow()
	}
	o := &q.ring[(q.head+q.n)&(len(q.ring)-1)]
	q.n++
	return o
}

// grow doubles the full ring, its obligations from the start in order.
func (q *oblQueue) grow() {
	r := make([]obligation, max(oblRoom, 2*len(q.ring)))
	k := copy(r, q.ring[q.head:])
	copy(r[k:], q.ring[:q.head])
	q.ring, q.head = r, 0
}

// first is the oldest obligation; the queue holds one.
func (q *oblQueue) first() *obligation { return &q.ring[q.head] }

// pop takes the oldest obligation out; the queue holds one.
func (q *oblQueue) pop() {
	q.head = (q.head + 1) & (len(q.ring) - 1)
	q.n--
}

// lastWait is a group's last topicWait found, and its topic.
type lastWait struct {
	topic string
	t     *topicWait
}

// waitClient is what the wakeup check knows of one client: 64 bytes, one
// cache line in the table (wakeup.cls), which a receive writes and its
// answer reads, cold in between in the hot topic's 500 clients (it was
// 96, and a receive wrote two; TestWaitClientSize).
type waitClient struct {
	polls []pollReq // parked receives, oldest first
	// lastTopic and lastQueue are the latest receive's (once rid > 0),
	// whose number is rid.
	lastTopic string
	rid       uint64 // receives so far
	lastQueue int32
	group     int32 // the client's group (set at every receive: 0 until it subscribed)
	paused    bool
}

func newWakeup(slack clock.Duration) wakeup {
	return wakeup{slack: slack, topics: map[waitKey]*topicWait{}, due: math.MaxInt64}
}

// client is the client's entry, growing the table as needed. The pointer
// is good until the next call for a client not seen yet.
func (w *wakeup) client(client int32) *waitClient {
	if client < 0 {
		x := w.neg[client]
		if x == nil {
			if w.neg == nil {
				w.neg = map[int32]*waitClient{}
			}
			x = &waitClient{}
			w.neg[client] = x
		}
		return x
	}
	for int(client) >= len(w.cls) {
		w.cls = append(w.cls, waitClient{})
	}
	return &w.cls[client]
}

func (w *wakeup) wait(k waitKey) *topicWait {
	t := w.find(k)
	if t == nil {
		t = &topicWait{key: k, byQueue: map[int32]int{}}
		w.topics[k] = t
		w.last = roomFor(w.last, k.group) // to remember it (findIn)
		w.lastMsg = roomFor(w.lastMsg, k.group)
	}
	return t
}

// roomFor returns ls grown, if need be, to hold an entry of group g.
func roomFor(ls []lastWait, g int32) []lastWait {
	if n := int(g) + 1; n > len(ls) {
		ls = append(ls, make([]lastWait, n-len(ls))...)
	}
	return ls
}

// find is w.topics[k], through the group's last entry found when that is
// k's (entries are never removed, so the one remembered stays k's).
func (w *wakeup) find(k waitKey) *topicWait { return w.findIn(w.last, k) }

// findMsg is find for a key made of a message's group and produced topic.
func (w *wakeup) findMsg(k waitKey) *topicWait { return w.findIn(w.lastMsg, k) }

// remembered is the group's entry in last when it is k's, else nil:
// findIn's first step, which the hottest lookups (an arrival, a lease, a
// parked receive) take inlined before calling anything.
func remembered(last []lastWait, k waitKey) *topicWait {
	if g := uint(k.group); g < uint(len(last)) && last[g].t != nil && sameName(last[g].topic, k.topic) {
		return last[g].t
	}
	return nil
}

// findIn is w.topics[k], through the group's entry in last when that is
// k's (entries are never removed from topics, so one remembered stays
// k's). A group that has an entry in topics has room in last (wait), so
// that findIn never grows it.
func (w *wakeup) findIn(last []lastWait, k waitKey) *topicWait {
	if t := remembered(last, k); t != nil {
		return t
	}
	t := w.topics[k]
	if g := uint(k.group); t != nil && g < uint(len(last)) {
		last[g] = lastWait{topic: k.topic, t: t}
	}
	return t
}

// waitOf is the topicWait a parked receive r of client counts in: the
// one of the client's group and r's topic.
func (w *wakeup) waitOf(client int32, r *pollReq) *topicWait {
	g := w.client(client).group
	if r.t != nil && r.grp == g {
		return r.t
	}
	return w.wait(waitKey{group: g, topic: r.topic})
}

func (w *wakeup) key(client int32, topic string) waitKey {
	return waitKey{group: w.client(client).group, topic: topic}
}

// receive notes a receive of client x (EvReceive), which may park
// next; cl is the checker's entry of the client (clientOf), which the
// caller has at hand, as it has x (wakeup.client): both inline there
// (receive, a wakeup method calling client, was over the budget).
// ObserveShared calls receive, parked and answer by the event's kind. A
// client's group is 0 until it subscribes (cl.known), and a client stays
// known: it is copied without a test. A receive seen is rid > 0.
func (x *waitClient) receive(cl *client, e *model.Event) {
	x.group = cl.group
	x.rid++
	x.lastTopic, x.lastQueue = e.Topic, e.Queue
}

// parked notes that a client's receive parked (EvParked).
func (w *wakeup) parked(e *model.Event) {
	x := w.client(e.Client)
	if e.Reason == model.RLockBusy {
		// A concurrent request held the engine's lock: it serves the
		// group (a lock-busy fault), and a re-run parks again.
		if x.rid > 0 {
			w.served(w.key(e.Client, x.lastTopic))
		}
		if len(x.polls) > 0 {
			return
		}
	}
	topic, queue := x.lastTopic, x.lastQueue
	if x.rid == 0 || e.Topic != "" {
		topic, queue = e.Topic, e.Queue
	}
	k := waitKey{group: x.group, topic: topic}
	t := remembered(w.last, k)
	if t == nil {
		t = w.wait(k)
	}
	// Its five fields written in place (appended, a pollReq, which holds
	// pointers, was built on the stack and copied in).
	n := len(x.polls)
	if n == cap(x.polls) {
		x.polls = slices.Grow(x.polls, 1)
	}
	x.polls = x.polls[:n+1]
	r := &x.polls[n]
	r.topic, r.rid, r.t, r.queue, r.grp = topic, x.rid, t, queue, x.group
	t.count(r, x.paused, 1)
}

// hold counts (d = 1) or uncounts (-1) a parked receive of client, as
// waiting or, while the client is paused, as paused.
func (w *wakeup) hold(client int32, r *pollReq, d int) {
	w.waitOf(client, r).count(r, w.client(client).paused, d)
}

// count counts (d = 1) or uncounts (-1) parked receive r here, as
// waiting or, for a paused client, as paused.
func (t *topicWait) count(r *pollReq, paused bool, d int) {
	switch {
	case paused:
		t.paused += d
	case r.queue < 0:
		t.all += d
	default:
		t.byQueue[r.queue] += d
	}
}

// pause moves a client's parked receives between waiting and paused.
// Pausing serves their topics: an arrival may already have woken one.
func (w *wakeup) pause(client int32, on bool) {
	x := w.client(client)
	if x.paused == on {
		return
	}
	for i := range x.polls {
		w.hold(client, &x.polls[i], -1)
	}
	x.paused = on
	for i := range x.polls {
		w.hold(client, &x.polls[i], 1)
		if on {
			w.waitOf(client, &x.polls[i]).gen++
		}
	}
}

// answer (EvReceived, EvReceiveLost) removes the client's parked receive (the oldest, on each queue
// it parked on) and marks its topic served. ObserveShared calls it when
// answerOne, its common case, declines.
func (w *wakeup) answer(e *model.Event) {
	x := w.client(e.Client)
	ps := x.polls
	if len(ps) == 0 {
		return
	}
	n := 1
	for n < len(ps) && ps[n].rid == ps[0].rid {
		n++
	}
	paused := x.paused
	for i := range ps[:n] {
		t := ps[i].t // waitOf's common case, without its call
		if t == nil || ps[i].grp != x.group {
			t = w.waitOf(e.Client, &ps[i])
		}
		t.count(&ps[i], paused, -1)
		t.gen++ // served
	}
	if len(ps) == n {
		x.polls = ps[:0] // keep the storage for the next parked receive
	} else {
		x.polls = ps[n:]
	}
}

// answerOne is answer's common case for client x, inlined where the
// caller has x (wakeup.client): no receive parked, or one, on every
// queue, of a client not paused, counted in the topicWait it found when
// it parked. It reports false, having done nothing, in any other case.
func (x *waitClient) answerOne() bool {
	switch len(x.polls) {
	case 0:
		return true
	case 1:
		if r := &x.polls[0]; r.t != nil && r.grp == x.group && r.queue < 0 && !x.paused {
			r.t.all--
			r.t.gen++ // served
			x.polls = x.polls[:0]
			return true
		}
	}
	return false
}

// served marks a group's topic served.
func (w *wakeup) served(k waitKey) {
	if t := w.find(k); t != nil {
		t.gen++
	}
}

// servedMsg is served for a key made of a message's group and produced
// topic (findMsg).
func (w *wakeup) servedMsg(k waitKey) {
	t := remembered(w.lastMsg, k)
	if t == nil {
		t = w.findMsg(k)
	}
	if t != nil {
		t.gen++
	}
}

// forgetClient drops a crashed client's parked receives; a topic left with
// nobody waiting has no obligation any more.
func (w *wakeup) forgetClient(client int32) {
	w.pause(client, false)
	x := w.client(client)
	for i := range x.polls {
		t := w.waitOf(client, &x.polls[i])
		t.count(&x.polls[i], false, -1) // unpaused above
		if t.waiting() == 0 {
			t.gen++
		}
	}
	x.polls = nil
}

// reset: a broker restart loses every parked receive.
func (w *wakeup) reset() {
	for _, t := range w.topics { // independent updates: order does not matter
		t.all, t.byQueue, t.paused = 0, map[int32]int{}, 0
		t.gen++
	}
	for i := range w.cls {
		w.cls[i].polls = nil
	}
	for _, x := range w.neg { // independent updates: order does not matter
		x.polls = nil
	}
}

// arrival: message m became visible to its group at place p
// (a produce, a copy, a lapse or release in place). A RocketMQ retry copy
// lives in another topic and wakes only all-queue receives: a
// queue-specific receive reads the retry topic on some requests only. An
// orderly group's pops read no retry topic at all, so a copy there (only
// a defect makes one: FifoChangeBelowCommitEmptyHandle) owes its parked
// receives nothing; what it does show is the retry queue's commit lag and
// a run that never drains.
func (w *wakeup) arrival(c *Checker, e *model.Event, m *msgState, p place) {
	copyElsewhere := !sameName(p.topic, m.topic)
	if copyElsewhere && m.g.orderly {
		return
	}
	k := waitKey{group: m.g.idx, topic: m.topic}
	t := remembered(w.lastMsg, k)
	if t == nil {
		t = w.findMsg(k)
	}
	if g := m.g; g.ordered && g.busy[queueKey{p.topic, p.queue}] > 0 {
		return // its queue (message group) is held by a lease in flight
	}
	if t == nil || t.paused > 0 || !(t.all > 0 || !copyElsewhere && t.byQueue[p.queue] > 0) {
		return
	}
	if w.obls.n == 0 {
		w.due = e.At.Add(w.slack)
	}
	oq := c.orderQueueOf(m, e)
	o := w.obls.add() // every field written: an obligation has these six
	o.w, o.gen, o.msg, o.seq, o.at, o.oq = t, t.gen, m.id, e.Seq, e.At, oq
}

// deadline is when o's group must have been served on its topic.
func (w *wakeup) deadline(o *obligation) clock.Time { return o.at.Add(w.slack) }

// expire judges the obligations whose deadline is before now. Deadlines
// grow with the trace, so the queue is checked from its head. (The
// caller calls it only when the head is due.)
func (w *wakeup) expire(c *Checker, now clock.Time) {
	for w.obls.n > 0 {
		o := w.obls.first()
		if d := w.deadline(o); d >= now {
			w.due = d // the new head's deadline, found by the loop's test
			return
		}
		if o.gen == o.w.gen { // else served since
			c.missedWakeup(o)
		}
		w.obls.pop()
	}
	w.due = math.MaxInt64
}

// missedWakeup judges obligation o, whose group was not served on its
// topic since it was made: a violation if its message is still available.
func (c *Checker) missedWakeup(o *obligation) {
	w := &c.wake
	k := o.w.key
	g := c.groups[k.group]
	m, _ := g.msgs.get(uint64(o.msg))
	// A message the engine dead-lettered before anyone could take it
	// (SQS moves it to the DLQ at the receive that reaches it) is no
	// longer available: nothing was promised. An orderly queue owes
	// nothing while a lease of it lives.
	if m != nil && len(m.tokens) > 0 && (o.oq == nil || len(o.oq.live) == 0 && m.settled == unsettled) {
		c.violate(InvMissedWakeup, o.seq, m, fmt.Sprintf("message %d became visible on topic %s at %v (event #%d) while a receive of group %s was parked on it, but no lease on %s and no answer to a parked receive followed within %v (parked now: %s)", o.msg, k.topic, o.at, o.seq, g.name, k.topic, w.slack, w.parkedOn(k)))
	}
}

func (w *wakeup) parkedOn(k waitKey) string {
	var cs []int32
	parked := func(cl int32, x *waitClient) {
		for _, r := range x.polls {
			if x.group == k.group && r.topic == k.topic {
				cs = append(cs, cl)
				break
			}
		}
	}
	for i := range w.cls {
		parked(int32(i), &w.cls[i])
	}
	for cl, x := range w.neg { // collected, then sorted
		parked(cl, x)
	}
	if len(cs) == 0 {
		return "none"
	}
	slices.Sort(cs)
	s := make([]string, len(cs))
	for i, cl := range cs {
		s[i] = fmt.Sprintf("client %d", cl)
	}
	return strings.Join(s, ", ")
}
