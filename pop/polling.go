package pop

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"popsim/clock"
	pfilter "popsim/filter"
	"popsim/model"
)

// Wakeup hands a suspended pop request back to the driver, which re-runs it
// with Pop (RocketMQ resubmits processRequest).
type Wakeup struct {
	ID uint64
	// Request is the broker's copy of the suspended request: the client's,
	// with BornTime defaulted to the time of its first arrival and a
	// negative QueueID as -1.
	Request PopRequest
	// Expired is true when the poll timed out rather than being woken by an
	// arrival; the re-run normally answers POLLING_TIMEOUT (210).
	Expired bool
}

// pollKey is the polling key topic@group@qid (qid -1 for all-queue requests).
// The sets are found by the equivalent qkey (the interned group@topic pair
// and the qid), which hashes two integers instead of two strings.
type pollKey struct {
	topic, group string
	qid          int32
}

type suspended struct {
	id      uint64
	expired int64
	qk      qkey // key's pair and qid
	req     PopRequest
	ff      *pfilter.Filter // the request's subscription
}

// key is the request's polling key, from its request (normalised: the
// all-queue qid is -1): only the invariants' messages name it, so a park
// does not write it.
func (s *suspended) key() pollKey { return pollKey{s.req.Topic, s.req.ConsumerGroup, s.req.QueueID} }

// matches is the polling service's filter check of an arrival: the
// consume queue's tags code, then the commit log (notifyMessageArriving).
func (s *suspended) matches(msg *model.Message) bool {
	return s.ff.MatchesAll() || matchStored(s.ff, msg)
}

// groupRef is a group registered on a topic, with its group@topic pair.
type groupRef struct {
	group string
	pair  uint32
}

// polling is PopLongPollingService: suspended requests per key, ordered by
// (expired, sequence), with a per-key cap and a global cap.
type polling struct {
	// sets[pair][qid+1] is key (pair, qid)'s set (qid -1: the all-queue
	// key), sorted by (expired, id); nil until a request parks on it. Dense
	// rows like the offsets', because every arrival looks up two keys.
	sets   [][]*pollSet
	byTime pollHeap
	count  int
	nextID uint64
	// stopped: the service has been shut down (StopPolling); nothing is
	// suspended any more until a restart starts a new one.
	stopped     bool
	topicGroups map[string][]groupRef // topicCidMap, groups in registration order
	free        []*suspended          // removed and released requests, for reuse
	// lastTopic and lastGroups remember the last lookup of topicGroups
	// (groupsOf): every park and every arrival looks its topic up, nearly
	// always the same one. register refreshes it when it adds a group.
	lastTopic  string
	lastGroups []groupRef
	lastValid  bool
	// regPair is the pair register last saw registered (0: none; pair ids
	// start at 1): parks come mostly from one group@topic, and a group once
	// registered stays so.
	regPair uint32
}

// groupsOf is topicGroups[topic], remembering the last lookup.
func (p *polling) groupsOf(topic string) []groupRef {
	if p.lastValid && p.lastTopic == topic {
		return p.lastGroups
	}
	gs := p.topicGroups[topic]
	p.lastTopic, p.lastGroups, p.lastValid = topic, gs, true
	return gs
}

func newPolling() *polling {
	return &polling{
		topicGroups: map[string][]groupRef{},
	}
}

// pollSet is one key's suspended requests, sorted by (expired, id): the
// live ones are items[head:]. A woken request is almost always the
// earliest of its key (notifyKey wakes the head; expire takes the earliest
// of all), so removing the head only advances head instead of shifting a
// set that holds every parked consumer of a busy group; a new request
// almost always expires last and is appended. An empty set stays in
// sets, its storage reused.
type pollSet struct {
	items []*suspended
	head  int
	at    int // its index in polling.byTime's heap plus 1; 0: not in it (empty)
}

// live returns the set's requests in order.
func (ps *pollSet) live() []*suspended { return ps.items[ps.head:] }

// first is the set's earliest request; the set must not be empty.
func (ps *pollSet) first() *suspended { return ps.items[ps.head] }

// insert files s at its place in the order (after every request not
// after it). A request woken and parked again keeps its born time, so it
// expires before requests parked since and goes in a few places from the
// end, mostly: it is moved back past them one by one, where a search and
// a bulk copy (two runtime calls, the copy with its write barriers) cost
// more for so few; past insertBack places the rest is searched.
func (ps *pollSet) insert(s *suspended) {
	if ps.head > 0 && len(ps.items) == cap(ps.items) {
		// full: move the live requests down instead of growing, one by
		// one: they are few (default scenario: 17.6 k moves of about two),
		// and copy and clear were two runtime calls with write barriers
		// (1.7 M instructions)
		items, n := ps.items, len(ps.items)-ps.head
		for i := range n {
			items[i] = items[ps.head+i]
		}
		for i := n; i < len(items); i++ {
			items[i] = nil
		}
		ps.items, ps.head = items[:n], 0
	}
	ps.items = append(ps.items, s)
	items, h := ps.items, ps.head
	i := len(items) - 1
	for lo := max(h, i-insertBack); i > lo && suspendedLess(s, items[i-1]); i-- {
		items[i] = items[i-1]
	}
	if i > h && suspendedLess(s, items[i-1]) {
		// farther back: items[i] is free, s goes in items[h:i]
		j := h + sort.Search(i-h, func(k int) bool { return suspendedLess(s, items[h+k]) })
		copy(items[j+1:i+1], items[j:i])
		i = j
	}
	items[i] = s
}

// insertBack is how many requests insert moves one by one.
const insertBack = 8

// remove takes s out of the set; s must be in it.
func (ps *pollSet) remove(s *suspended) {
	if ps.items[ps.head] == s {
		ps.dropFirst()
		return
	}
	// past the first: the set keeps its first, so it does not empty
	for i := ps.head + 1; i < len(ps.items); i++ {
		if ps.items[i] == s {
			copy(ps.items[i:], ps.items[i+1:])
			ps.items[len(ps.items)-1] = nil
			ps.items = ps.items[:len(ps.items)-1]
			break
		}
	}
}

// dropFirst takes the set's first request out.
func (ps *pollSet) dropFirst() {
	ps.items[ps.head] = nil
	ps.head++
	if ps.head == len(ps.items) {
		ps.items, ps.head = ps.items[:0], 0
	}
}

// set returns key k's suspended requests in order (nil: none).
func (p *polling) set(k qkey) []*suspended {
	if ps := p.setOf(k); ps != nil {
		return ps.live()
	}
	return nil
}

// setOf returns key k's set, nil when none was made.
func (p *polling) setOf(k qkey) *pollSet {
	if int(k.pair) < len(p.sets) {
		if r, i := p.sets[k.pair], int(k.qid)+1; i >= 0 && i < len(r) {
			return r[i]
		}
	}
	return nil
}

// parked reports whether key k has a request parked: appendWoken wakes
// nothing otherwise.
func (p *polling) parked(k qkey) bool {
	ps := p.setOf(k)
	return ps != nil && ps.head < len(ps.items)
}

// makeSet returns key k's set, making it if needed.
func (p *polling) makeSet(k qkey) *pollSet {
	if ps := p.setOf(k); ps != nil {
		return ps
	}
	ps := &pollSet{}
	*rowCell(&p.sets, k.pair, int(k.qid)+1) = ps
	return ps
}

// pollHeap holds the non-empty sets by their earliest requests (each
// set's head, suspendedLess): a binary min-heap in which each set knows
// its index (pollSet.at), so the earliest request of all is the root's
// head (expire, NextPollExpiry). A woken request is its set's head, and
// a set's order is the heap's, so most wakeups leave the set where it is
// (a busy group's consumers park on one key: a heap of one); the heap of
// every request it replaced filed the request at the end of the order
// down past half its levels, twice a level, on every wakeup (stop 38:
// 16 M of hot-topic-500x500's 706 M instructions). The ordered walks
// (drain, Disconnect, CheckInvariants) are rare and sort a copy.
type pollHeap struct{ sets []*pollSet }

// Len is the number of requests.
func (h *pollHeap) Len() int {
	n := 0
	for _, ps := range h.sets {
		n += len(ps.live())
	}
	return n
}

// Min returns the earliest request.
func (h *pollHeap) Min() (*suspended, bool) {
	if len(h.sets) == 0 {
		return nil, false
	}
	return h.sets[0].first(), true
}

// Scan calls iter with every request in (expired, id) order while it
// returns true; iter may remove requests.
func (h *pollHeap) Scan(iter func(*suspended) bool) {
	var sorted []*suspended
	for _, ps := range h.sets {
		sorted = append(sorted, ps.live()...)
	}
	slices.SortFunc(sorted, func(a, b *suspended) int {
		return cmp.Or(cmp.Compare(a.expired, b.expired), cmp.Compare(a.id, b.id))
	})
	for _, s := range sorted {
		if !iter(s) {
			return
		}
	}
}

// filed updates ps's place after a request was inserted into it: a set
// that was empty joins the heap, one whose head the request became
// moves up.
func (h *pollHeap) filed(ps *pollSet, s *suspended) {
	switch {
	case ps.at == 0:
		h.sets = append(h.sets, ps)
		h.up(ps, len(h.sets)-1)
	case ps.first() == s:
		h.up(ps, ps.at-1)
	}
}

// headLeft updates ps's place after its head left it: an empty set
// leaves the heap, another moves down (its new head is later).
func (h *pollHeap) headLeft(ps *pollSet) {
	i := ps.at - 1
	if len(ps.live()) > 0 {
		h.down(ps, i)
		return
	}
	n := len(h.sets) - 1
	last := h.sets[n]
	h.sets[n] = nil
	h.sets = h.sets[:n]
	if i < n {
		if i > 0 && setLess(last, h.sets[(i-1)/2]) {
			h.up(last, i)
		} else {
			h.down(last, i)
		}
	}
	ps.at = 0
}

// up files ps at index i or above it.
func (h *pollHeap) up(ps *pollSet, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !setLess(ps, h.sets[p]) {
			break
		}
		h.sets[i] = h.sets[p]
		h.sets[i].at = i + 1
		i = p
	}
	h.sets[i], ps.at = ps, i+1
}

// down files ps at index i or below it.
func (h *pollHeap) down(ps *pollSet, i int) {
	n := len(h.sets)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && setLess(h.sets[r], h.sets[c]) {
			c = r
		}
		if !setLess(h.sets[c], ps) {
			break
		}
		h.sets[i] = h.sets[c]
		h.sets[i].at = i + 1
		i = c
	}
	h.sets[i], ps.at = ps, i+1
}

// holds reports whether ps is in the heap, where it thinks it is.
func (h *pollHeap) holds(ps *pollSet) bool {
	return ps.at > 0 && ps.at <= len(h.sets) && h.sets[ps.at-1] == ps
}

// check verifies the heap order and every set's index.
func (h *pollHeap) check() error {
	for i, ps := range h.sets {
		if len(ps.live()) == 0 {
			return fmt.Errorf("pop: invariant: an empty suspended set at heap index %d", i)
		}
		if ps.at != i+1 {
			return fmt.Errorf("pop: invariant: suspended set %v at heap index %d thinks it is at %d", ps.first().key(), i, ps.at-1)
		}
		if i > 0 && setLess(ps, h.sets[(i-1)/2]) {
			return fmt.Errorf("pop: invariant: suspended set %v's head expires before its heap parent's", ps.first().key())
		}
	}
	return nil
}

// setLess orders non-empty sets by their heads.
func setLess(a, b *pollSet) bool { return suspendedLess(a.first(), b.first()) }

func suspendedLess(a, b *suspended) bool {
	if a.expired != b.expired {
		return a.expired < b.expired
	}
	return a.id < b.id
}

// register adds group, whose pair with topic is pair, to topic's groups
// if it is not there yet. It inlines: nearly every suspend is of the last
// pair registered (registerNew).
func (p *polling) register(topic, group string, pair uint32) {
	if pair != p.regPair {
		p.registerNew(topic, group, pair)
	}
}

// registerNew is register of a pair other than the last, kept out of
// line, where register inlines it.
//
//go:noinline
func (p *polling) registerNew(topic, group string, pair uint32) {
	p.regPair = pair
	gs := p.groupsOf(topic)
	for _, g := range gs {
		if g.pair == pair { // the same group: one topic, one pair a group
			return
		}
	}
	gs = append(gs, groupRef{group, pair})
	p.topicGroups[topic] = gs
	p.lastTopic, p.lastGroups, p.lastValid = topic, gs, true
}

// pollResult is what polling() decides for a request that found nothing.
type pollResult uint8

const (
	notPolling pollResult = iota
	pollingSuc
	pollingFull
	pollingTimeout
)

// suspend parks req (whose group@topic is pair) for long polling; ff is
// its subscription.
func (p *polling) suspend(b *Broker, req *PopRequest, pair uint32, nowMs int64, ff *pfilter.Filter) (pollResult, uint64) {
	pollMs := req.PollTime.Millis()
	if pollMs <= 0 || p.stopped {
		return notPolling, 0
	}
	p.register(req.Topic, req.ConsumerGroup, pair)
	expired := req.BornTime.Millis() + pollMs
	if p.count >= b.cfg.MaxPopPollingSize {
		return pollingFull, 0
	}
	if nowMs > expired-PollTimeoutSlack {
		return pollingTimeout, 0
	}
	k := qkey{pair, req.QueueID}
	ps := p.setOf(k) // inlined: makeSet is not
	if ps == nil {
		ps = p.makeSet(k)
	}
	if len(ps.live()) > b.cfg.PopPollingSize {
		return pollingFull, 0
	}
	p.nextID++
	s := p.alloc() // zero: field by field, without a literal's temporary and its copy
	s.id, s.expired, s.qk, s.ff = p.nextID, expired, k, ff
	s.req = *req
	ps.insert(s)
	p.byTime.filed(ps, s)
	p.count++
	return pollingSuc, s.id
}

// alloc returns a released suspended, or a new one: zero either way.
func (p *polling) alloc() *suspended {
	n := len(p.free)
	if n == 0 {
		return new(suspended)
	}
	s := p.free[n-1]
	p.free[n-1] = nil
	p.free = p.free[:n-1]
	if invariants {
		assertf(*s == suspended{}, "released poll %d reused not cleared", s.id)
	}
	return s
}

// release recycles a removed request; the caller must hold no copy of
// the pointer.
func (p *polling) release(s *suspended) {
	*s = suspended{}
	p.free = append(p.free, s)
}

func (p *polling) remove(s *suspended) {
	ps := p.setOf(s.qk)
	if ps.first() == s {
		p.removeFirst(ps)
		return
	}
	ps.remove(s)
	p.count--
}

// removeFirst is remove of the first request of set ps, which wake,
// holding the set and knowing its request first, takes directly (where a
// call of remove found the set again).
func (p *polling) removeFirst(ps *pollSet) {
	ps.dropFirst()
	p.byTime.headLeft(ps)
	p.count--
}

// notifyKey wakes at most one request of the key: the earliest-expiring one,
// if its filter accepts the arrival msg (or force is set; msg may then be
// nil).
func (p *polling) notifyKey(k qkey, msg *model.Message, force bool) (Wakeup, bool) {
	s := p.wake(k, msg, force)
	if s == nil {
		return Wakeup{}, false
	}
	w := Wakeup{ID: s.id, Request: s.req}
	p.release(s)
	return w, true
}

// appendWoken is notifyKey appending the wakeup, if any, to woken: no
// Wakeup, a large struct, is copied or zeroed on the way.
func (p *polling) appendWoken(woken []Wakeup, k qkey, msg *model.Message, force bool) []Wakeup {
	if s := p.wake(k, msg, force); s != nil {
		// within the capacity, the slot is resliced, not zeroed: every
		// field is written
		n := len(woken)
		if n < cap(woken) {
			woken = woken[:n+1]
		} else {
			woken = append(woken, Wakeup{})
		}
		w := &woken[n]
		w.ID, w.Request, w.Expired = s.id, s.req, false
		p.release(s)
	}
	return woken
}

// wake removes and returns the request notifyKey wakes, nil when none;
// the caller releases it.
func (p *polling) wake(k qkey, msg *model.Message, force bool) *suspended {
	ps := p.setOf(k)
	if ps == nil || ps.head == len(ps.items) {
		return nil
	}
	s := ps.items[ps.head]
	if !force && !s.matches(msg) {
		return nil
	}
	p.removeFirst(ps)
	return s
}

// expire removes and returns requests that timed out (now > expired - 50),
// earliest first.
func (p *polling) expire(nowMs int64) []Wakeup {
	var out []Wakeup
	for {
		s, ok := p.byTime.Min()
		if !ok || nowMs <= s.expired-PollTimeoutSlack {
			return out
		}
		p.remove(s)
		out = append(out, Wakeup{ID: s.id, Request: s.req, Expired: true})
		p.release(s)
	}
}

func (p *polling) drain() []Wakeup {
	var out []Wakeup
	p.byTime.Scan(func(s *suspended) bool {
		out = append(out, Wakeup{ID: s.id, Request: s.req, Expired: true})
		return true
	})
	return out
}

// StopPolling is the long-polling half of a graceful broker stop
// (BrokerController.shutdown stopping PopLongPollingService): the service
// leaves its loop and wakes every suspended pop (its clean-all), in
// expiry order, so the driver re-runs them and the clients get answers
// before the broker goes away; a re-run finds messages, or else is not
// suspended again (polling() answers NOT_POLLING once the service is
// stopped) and answers POLLING_TIMEOUT (210) at once. Until Restart no pop
// is suspended. Held pulls are not woken (PullRequestHoldService's loop
// just ends): Restart drops them. The rest of a graceful stop is
// FlushConsumerOffsets, then Restart; a crash is Restart alone.
func (b *Broker) StopPolling(now clock.Time) []Wakeup {
	b.touch(now.Millis())
	out := b.polls.drain()
	for i := range out {
		out[i].Expired = false
	}
	p := newPolling()
	p.nextID, p.stopped = b.polls.nextID, true
	b.polls = p
	return out
}

// PollTick is PopLongPollingService's periodic scan: it hands back every
// suspended request whose poll time is up. The driver re-runs them.
func (b *Broker) PollTick(now clock.Time) []Wakeup {
	b.touch(now.Millis())
	return b.polls.expire(now.Millis())
}

// NextPollExpiry is the earliest time at which PollTick will hand
// something back, so a driver can schedule exactly one tick.
func (b *Broker) NextPollExpiry() (clock.Time, bool) {
	s, ok := b.polls.byTime.Min()
	if !ok {
		return 0, false
	}
	return clock.FromMillis(s.expired - PollTimeoutSlack + 1), true
}

// Disconnect drops the suspended pop requests of a client whose channel
// closed (a crashed consumer); RocketMQ discards them when it finds the
// channel inactive. It returns how many were dropped. Held pulls stay:
// upstream re-runs them when they are woken and only the response is lost.
func (b *Broker) Disconnect(clientID string) int {
	var gone []*suspended
	b.polls.byTime.Scan(func(s *suspended) bool {
		if s.req.ClientID == clientID {
			gone = append(gone, s)
		}
		return true
	})
	for _, s := range gone {
		b.polls.remove(s)
		b.polls.release(s)
	}
	return len(gone)
}

// notifyArrival is notifyMessageArrivingWithRetryTopic: map a retry topic to
// its normal topic (V2 always; V1 unless the #9632 bug is on), then for each
// group registered on that topic wake one request on the all-queue key and
// one on the queue's key. It appends the wakeups to woken and returns it.
func (b *Broker) notifyArrival(woken []Wakeup, nowMs int64, msg *model.Message, retryGroup string) []Wakeup {
	t := msg.Topic
	switch {
	case model.IsPopRetryTopicV2(t):
		t = model.ParseNormalTopicV2(t)
	case model.IsRetryTopic(t):
		if b.cfg.Bugs.V1RetryNoPollWake || retryGroup == "" {
			return woken
		}
		t = model.ParseNormalTopic(t, retryGroup)
	}
	gs := b.polls.groupsOf(t)
	if len(gs) == 0 {
		return woken
	}
	force := msg.QueueOffset%b.cfg.PopLongPollingForceNotifyInterval == 0
	for _, g := range gs { // appendWoken on the keys with parked requests (one key in two, mostly)
		if k := (qkey{g.pair, -1}); b.polls.parked(k) {
			woken = b.polls.appendWoken(woken, k, msg, force)
		}
		if k := (qkey{g.pair, msg.QueueID}); b.polls.parked(k) {
			woken = b.polls.appendWoken(woken, k, msg, force)
		}
	}
	return woken
}
