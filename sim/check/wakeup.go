package check

import (
	"fmt"
	"sort"
	"strings"

	"popsim/clock"
	"popsim/model"
)

// pollReq is a pop request: its topic ("" = any) and queue (-1 = all).
type pollReq struct {
	topic string
	queue int32
}

// topicWait counts the suspended requests on one topic. gen moves whenever
// the topic is served (a delivery on it, an answer to one of its suspended
// requests, or nobody left waiting): obligations made before are met.
type topicWait struct {
	all     int
	byQueue map[int32]int
	// paused counts suspended requests of paused clients: the broker may
	// wake one of them for an arrival, and its answer is written only when
	// the client resumes, so no arrival is judged meanwhile.
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

// obligation: a message became visible at `at` while a matching request
// was suspended; by `deadline` the topic must be served.
type obligation struct {
	w        *topicWait
	gen      uint64
	topic    string
	msg      string
	seq      int64
	at       clock.Time
	deadline clock.Time
}

// wakeup checks long polling: a message that becomes visible for a topic
// while a pop request on that topic is suspended must be delivered, or a
// suspended request answered, within slack.
type wakeup struct {
	slack clock.Duration
	last  map[int32]pollReq   // the latest EvPopRequest per client
	polls map[int32][]pollReq // suspended requests per client, oldest first
	// paused clients: an answer to them is written only when they resume,
	// so their suspended requests are not counted as waiting meanwhile.
	paused map[int32]bool
	topics map[string]*topicWait
	obls   []obligation
	head   int
}

func newWakeup(slack clock.Duration) wakeup {
	return wakeup{slack: slack, last: map[int32]pollReq{}, polls: map[int32][]pollReq{}, paused: map[int32]bool{}, topics: map[string]*topicWait{}}
}

func (w *wakeup) wait(topic string) *topicWait {
	t := w.topics[topic]
	if t == nil {
		t = &topicWait{byQueue: map[int32]int{}}
		w.topics[topic] = t
	}
	return t
}

func (w *wakeup) add(r pollReq, d int) {
	t := w.wait(r.topic)
	if r.queue < 0 {
		t.all += d
	} else {
		t.byQueue[r.queue] += d
	}
}

func (w *wakeup) onPop(e *model.Event) {
	switch e.Kind {
	case model.EvPopRequest:
		w.last[e.Client] = pollReq{topic: e.Topic, queue: e.Queue}
	case model.EvPopSuspended:
		r, ok := w.last[e.Client]
		if e.Topic != "" || !ok {
			r = pollReq{topic: e.Topic, queue: e.Queue}
		}
		w.polls[e.Client] = append(w.polls[e.Client], r)
		w.hold(e.Client, r, 1)
	case model.EvPopResponse, model.EvPopLost:
		w.answer(e)
	}
}

// hold counts (d = 1) or uncounts (-1) a suspended request of client, as
// waiting or, while the client is paused, as paused.
func (w *wakeup) hold(client int32, r pollReq, d int) {
	if w.paused[client] {
		w.wait(r.topic).paused += d
		return
	}
	w.add(r, d)
}

// pause moves a client's suspended requests between waiting and paused.
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
			w.topics[r.topic].gen++
		}
	}
}

// answer removes the client's suspended request (the one on e.Topic, else
// the oldest) and marks its topic served.
func (w *wakeup) answer(e *model.Event) {
	ps := w.polls[e.Client]
	i := 0
	if e.Topic != "" {
		for i < len(ps) && ps[i].topic != e.Topic {
			i++
		}
	}
	if i >= len(ps) {
		return
	}
	r := ps[i]
	w.polls[e.Client] = append(ps[:i], ps[i+1:]...)
	w.hold(e.Client, r, -1)
	w.served(r.topic)
}

// served marks a topic (and the any-topic requests) served.
func (w *wakeup) served(topic string) {
	if t := w.topics[topic]; t != nil {
		t.gen++
	}
	if t := w.topics[""]; t != nil && topic != "" {
		t.gen++
	}
}

// forgetClient drops a crashed client's suspended requests; a topic left
// with nobody waiting has no obligation any more.
func (w *wakeup) forgetClient(client int32) {
	w.pause(client, false)
	for _, r := range w.polls[client] {
		w.add(r, -1)
		if t := w.topics[r.topic]; t.count() == 0 {
			t.gen++
		}
	}
	delete(w.polls, client)
}

// reset: a broker restart loses every suspended request.
func (w *wakeup) reset() {
	for _, t := range w.topics { // independent updates: order does not matter
		t.all, t.byQueue, t.paused = 0, map[int32]int{}, 0
		t.gen++
	}
	w.polls = map[int32][]pollReq{}
}

// arrival: the message of e became visible on topic (queue q). A retry copy
// wakes only all-queue requests: a queue-specific request reads the retry
// topic on some requests only.
func (w *wakeup) arrival(e *model.Event, topic string, q int32, retry bool) {
	for _, name := range [2]string{topic, ""} {
		t := w.topics[name]
		if t == nil || t.paused > 0 || !(t.all > 0 || !retry && t.byQueue[q] > 0) {
			continue
		}
		w.obls = append(w.obls, obligation{w: t, gen: t.gen, topic: topic, msg: e.Msg, seq: e.Seq, at: e.At, deadline: e.At.Add(w.slack)})
		return
	}
}

// expire judges the obligations whose deadline is before now. Deadlines
// grow with the trace, so the queue is checked from its head.
func (w *wakeup) expire(c *Checker, now clock.Time) {
	for w.head < len(w.obls) && w.obls[w.head].deadline < now {
		o := &w.obls[w.head]
		if o.gen == o.w.gen {
			c.violate(InvMissedWakeup, o.seq, c.msg(o.msg), fmt.Sprintf("%s became visible on topic %s at %v (event #%d) while a pop request was suspended on it, but no delivery on %s and no answer to a suspended request followed within %v (suspended now: %s)", o.msg, o.topic, o.at, o.seq, o.topic, w.slack, w.suspendedOn(o.topic)))
		}
		w.head++
	}
	if w.head > 1024 && w.head*2 > len(w.obls) {
		w.obls = append(w.obls[:0], w.obls[w.head:]...)
		w.head = 0
	}
}

func (w *wakeup) suspendedOn(topic string) string {
	var cs []int32
	for cl, ps := range w.polls { // collected, then sorted
		for _, r := range ps {
			if r.topic == topic || r.topic == "" {
				cs = append(cs, cl)
				break
			}
		}
	}
	if len(cs) == 0 {
		return "none"
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i] < cs[j] })
	s := make([]string, len(cs))
	for i, cl := range cs {
		s[i] = fmt.Sprintf("client %d", cl)
	}
	return strings.Join(s, ", ")
}
