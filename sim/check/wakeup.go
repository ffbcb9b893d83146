package check

import (
	"fmt"
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
// removes them all.
type pollReq struct {
	topic string
	queue int32
	rid   uint64
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
	all     int
	byQueue map[int32]int
	// paused counts parked receives of paused clients: the engine may wake
	// one of them for an arrival, and its answer is written only when the
	// client resumes, so no arrival is judged meanwhile.
	paused int
	gen    uint64
}

func (w *topicWait) count() int {
	n := w.all
	for _, k := range w.byQueue { // counting only
		n += k
	}
	return n
}

// obligation: a message became visible at `at` while a matching receive
// was parked; by `deadline` the group must be served on the topic.
type obligation struct {
	w        *topicWait
	gen      uint64
	key      waitKey
	msg      model.MsgID
	seq      int64
	at       clock.Time
	deadline clock.Time
}

type wakeup struct {
	slack  clock.Duration
	last   map[int32]pollReq   // the latest receive per client
	rid    map[int32]uint64    // receives per client so far
	polls  map[int32][]pollReq // parked receives per client, oldest first
	group  map[int32]int32     // each client's group (set at its first receive)
	paused map[int32]bool
	topics map[waitKey]*topicWait
	obls   []obligation
	head   int
}

func newWakeup(slack clock.Duration) wakeup {
	return wakeup{slack: slack, last: map[int32]pollReq{}, rid: map[int32]uint64{}, polls: map[int32][]pollReq{}, group: map[int32]int32{}, paused: map[int32]bool{}, topics: map[waitKey]*topicWait{}}
}

func (w *wakeup) wait(k waitKey) *topicWait {
	t := w.topics[k]
	if t == nil {
		t = &topicWait{byQueue: map[int32]int{}}
		w.topics[k] = t
	}
	return t
}

func (w *wakeup) key(client int32, topic string) waitKey {
	return waitKey{group: w.group[client], topic: topic}
}

func (w *wakeup) add(client int32, r pollReq, d int) {
	t := w.wait(w.key(client, r.topic))
	if r.queue < 0 {
		t.all += d
	} else {
		t.byQueue[r.queue] += d
	}
}

func (w *wakeup) onReceive(c *Checker, e *model.Event) {
	switch e.Kind {
	case model.EvReceive:
		if cl := c.clientOf(e); cl.known {
			w.group[e.Client] = cl.group
		}
		w.rid[e.Client]++
		w.last[e.Client] = pollReq{topic: e.Topic, queue: e.Queue, rid: w.rid[e.Client]}
	case model.EvParked:
		r, ok := w.last[e.Client]
		if !ok || e.Topic != "" {
			r = pollReq{topic: e.Topic, queue: e.Queue, rid: w.rid[e.Client]}
		}
		w.polls[e.Client] = append(w.polls[e.Client], r)
		w.hold(e.Client, r, 1)
	case model.EvReceived, model.EvReceiveLost:
		w.answer(e)
	}
}

// hold counts (d = 1) or uncounts (-1) a parked receive of client, as
// waiting or, while the client is paused, as paused.
func (w *wakeup) hold(client int32, r pollReq, d int) {
	if w.paused[client] {
		w.wait(w.key(client, r.topic)).paused += d
		return
	}
	w.add(client, r, d)
}

// pause moves a client's parked receives between waiting and paused.
// Pausing serves their topics: an arrival may already have woken one.
func (w *wakeup) pause(client int32, on bool) {
	if w.paused[client] == on {
		return
	}
	for _, r := range w.polls[client] {
		w.hold(client, r, -1)
	}
	if on {
		w.paused[client] = true
	} else {
		delete(w.paused, client)
	}
	for _, r := range w.polls[client] {
		w.hold(client, r, 1)
		if on {
			w.wait(w.key(client, r.topic)).gen++
		}
	}
}

// answer removes the client's parked receive (the oldest, on each queue
// it parked on) and marks its topic served.
func (w *wakeup) answer(e *model.Event) {
	ps := w.polls[e.Client]
	if len(ps) == 0 {
		return
	}
	n := 1
	for n < len(ps) && ps[n].rid == ps[0].rid {
		n++
	}
	for _, r := range ps[:n] {
		w.hold(e.Client, r, -1)
		w.served(w.key(e.Client, r.topic))
	}
	if len(ps) == n {
		w.polls[e.Client] = ps[:0] // keep the storage for the next parked receive
	} else {
		w.polls[e.Client] = ps[n:]
	}
}

// served marks a group's topic served.
func (w *wakeup) served(k waitKey) {
	if t := w.topics[k]; t != nil {
		t.gen++
	}
}

// forgetClient drops a crashed client's parked receives; a topic left with
// nobody waiting has no obligation any more.
func (w *wakeup) forgetClient(client int32) {
	w.pause(client, false)
	for _, r := range w.polls[client] {
		w.add(client, r, -1)
		if t := w.wait(w.key(client, r.topic)); t.count() == 0 {
			t.gen++
		}
	}
	delete(w.polls, client)
}

// reset: a broker restart loses every parked receive.
func (w *wakeup) reset() {
	for _, t := range w.topics { // independent updates: order does not matter
		t.all, t.byQueue, t.paused = 0, map[int32]int{}, 0
		t.gen++
	}
	clear(w.polls)
}

// arrival: message m became visible to its group at place p
// (a produce, a copy, a lapse or release in place). A RocketMQ retry copy
// lives in another topic and wakes only all-queue receives: a
// queue-specific receive reads the retry topic on some requests only.
func (w *wakeup) arrival(c *Checker, e *model.Event, m *msgState, p place) {
	k := waitKey{group: m.g.idx, topic: m.topic}
	t := w.topics[k]
	copyElsewhere := p.topic != m.topic
	if g := m.g; g.ordered && g.busy[queueKey{p.topic, p.queue}] > 0 {
		return // its queue (message group) is held by a lease in flight
	}
	if t == nil || t.paused > 0 || !(t.all > 0 || !copyElsewhere && t.byQueue[p.queue] > 0) {
		return
	}
	w.obls = append(w.obls, obligation{w: t, gen: t.gen, key: k, msg: m.id, seq: e.Seq, at: e.At, deadline: e.At.Add(w.slack)})
}

// expire judges the obligations whose deadline is before now. Deadlines
// grow with the trace, so the queue is checked from its head.
func (w *wakeup) expire(c *Checker, now clock.Time) {
	for w.head < len(w.obls) && w.obls[w.head].deadline < now {
		o := &w.obls[w.head]
		g := c.groups[o.key.group]
		m, _ := g.msgs.get(uint64(o.msg))
		// A message the engine dead-lettered before anyone could take it
		// (SQS moves it to the DLQ at the receive that reaches it) is no
		// longer available: nothing was promised.
		if o.gen == o.w.gen && m != nil && len(m.tokens) > 0 {
			c.violate(InvMissedWakeup, o.seq, m, fmt.Sprintf("message %d became visible on topic %s at %v (event #%d) while a receive of group %s was parked on it, but no lease on %s and no answer to a parked receive followed within %v (parked now: %s)", o.msg, o.key.topic, o.at, o.seq, g.name, o.key.topic, w.slack, w.parkedOn(o.key)))
		}
		w.head++
	}
	if w.head > 1024 && w.head*2 > len(w.obls) {
		w.obls = append(w.obls[:0], w.obls[w.head:]...)
		w.head = 0
	}
}

func (w *wakeup) parkedOn(k waitKey) string {
	var cs []int32
	for cl, ps := range w.polls { // collected, then sorted
		for _, r := range ps {
			if w.key(cl, r.topic) == k {
				cs = append(cs, cl)
				break
			}
		}
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
