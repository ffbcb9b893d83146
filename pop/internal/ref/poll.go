package ref

import (
	"sort"

	"popsim/clock"
	"popsim/filter"
	"popsim/model"
	"popsim/pop"
)

// matches is the store's filter check of a message, in both of its
// stages: the tags code, then the commit log (SQL92). A nil filter is
// "*".
func matches(f *filter.Filter, m *model.Message) bool {
	return f.MatchConsumeQueue(filter.TagsCode(m.Tags)) && f.MatchCommitLog(m)
}

// pollKey is topic@group@qid; qid is -1 for all-queue requests.
type pollKey struct {
	topic, group string
	qid          int32
}

// parked is one suspended pop request.
type parked struct {
	id      uint64
	expired int64
	key     pollKey
	req     pop.PopRequest
	ff      *filter.Filter // the request's subscription
}

// accepts is the filter check of an arrival.
func (p *parked) accepts(m *model.Message) bool { return matches(p.ff, m) }

func before(a, b *parked) bool {
	return a.expired < b.expired || a.expired == b.expired && a.id < b.id
}

// earliest returns the index of the suspended request with the smallest
// (expired, id) among those ok accepts, or -1.
func (b *Broker) earliest(ok func(*parked) bool) int {
	best := -1
	for i := range b.polls {
		if ok(&b.polls[i]) && (best < 0 || before(&b.polls[i], &b.polls[best])) {
			best = i
		}
	}
	return best
}

func (b *Broker) unpark(i int) parked {
	p := b.polls[i]
	b.polls = append(b.polls[:i], b.polls[i+1:]...)
	return p
}

func (b *Broker) keyCount(k pollKey) int {
	n := 0
	for _, p := range b.polls {
		if p.key == k {
			n++
		}
	}
	return n
}

// park is PopLongPollingService.polling for a request that found nothing.
func (b *Broker) park(req *pop.PopRequest, nowMs int64, ff *filter.Filter) (pop.PopStatus, model.ResponseCode, uint64) {
	if req.PollTime.Millis() <= 0 {
		return pop.PopPollingNotFound, model.PollingTimeout, 0
	}
	b.register(req.Topic, req.ConsumerGroup)
	expired := req.BornTime.Millis() + req.PollTime.Millis()
	if len(b.polls) >= b.cfg.MaxPopPollingSize {
		return pop.PopPollingFull, model.PollingFull, 0
	}
	if nowMs > expired-pop.PollTimeoutSlack {
		return pop.PopPollingNotFound, model.PollingTimeout, 0
	}
	k := pollKey{req.Topic, req.ConsumerGroup, req.QueueID}
	if b.keyCount(k) > b.cfg.PopPollingSize {
		return pop.PopPollingFull, model.PollingFull, 0
	}
	b.nextPollID++
	b.polls = append(b.polls, parked{id: b.nextPollID, expired: expired, key: k, req: *req, ff: ff})
	return pop.PopSuspended, model.Success, b.nextPollID
}

func (b *Broker) register(topicName, group string) {
	for _, g := range b.topicGroups[topicName] {
		if g == group {
			return
		}
	}
	b.topicGroups[topicName] = append(b.topicGroups[topicName], group)
}

// wakeOne wakes the earliest request of key k if it accepts msg (or force).
func (b *Broker) wakeOne(k pollKey, msg *model.Message, force bool) (pop.Wakeup, bool) {
	i := b.earliest(func(p *parked) bool { return p.key == k })
	if i < 0 || !force && !b.polls[i].accepts(msg) {
		return pop.Wakeup{}, false
	}
	p := b.unpark(i)
	return pop.Wakeup{ID: p.id, Request: p.req}, true
}

// arrived is notifyMessageArrivingWithRetryTopic: a retry topic maps to its
// normal topic (V1 only when the #9632 bug is off and the group is known);
// each group registered on the topic gets one wake on the all-queue key and
// one on the message's queue key.
func (b *Broker) arrived(msg *model.Message, retryGroup string) []pop.Wakeup {
	t := msg.Topic
	if model.IsPopRetryTopicV2(t) {
		t = model.ParseNormalTopicV2(t)
	} else if model.IsRetryTopic(t) {
		if b.cfg.Bugs.V1RetryNoPollWake || retryGroup == "" {
			return nil
		}
		t = model.ParseNormalTopic(t, retryGroup)
	}
	force := msg.QueueOffset%b.cfg.PopLongPollingForceNotifyInterval == 0
	var out []pop.Wakeup
	for _, g := range b.topicGroups[t] {
		for _, qid := range []int32{-1, msg.QueueID} {
			if w, ok := b.wakeOne(pollKey{t, g, qid}, msg, force); ok {
				out = append(out, w)
			}
		}
	}
	return out
}

// PollTick hands back every request whose poll time is up, earliest first.
func (b *Broker) PollTick(now clock.Time) []pop.Wakeup {
	b.touch(now.Millis())
	var out []pop.Wakeup
	for {
		i := b.earliest(func(*parked) bool { return true })
		if i < 0 || now.Millis() <= b.polls[i].expired-pop.PollTimeoutSlack {
			return out
		}
		p := b.unpark(i)
		out = append(out, pop.Wakeup{ID: p.id, Request: p.req, Expired: true})
	}
}

// NextPollExpiry is the first time PollTick hands something back.
func (b *Broker) NextPollExpiry() (clock.Time, bool) {
	i := b.earliest(func(*parked) bool { return true })
	if i < 0 {
		return 0, false
	}
	return clock.FromMillis(b.polls[i].expired - pop.PollTimeoutSlack + 1), true
}

// Disconnect drops a client's suspended requests and returns how many.
func (b *Broker) Disconnect(clientID string) int {
	kept := b.polls[:0]
	for _, p := range b.polls {
		if p.req.ClientID != clientID {
			kept = append(kept, p)
		}
	}
	n := len(b.polls) - len(kept)
	b.polls = kept
	return n
}

// dropAllPolls empties the polling table, earliest first (a restart).
func (b *Broker) dropAllPolls() []pop.Wakeup {
	ps := append([]parked(nil), b.polls...)
	sort.Slice(ps, func(i, j int) bool { return before(&ps[i], &ps[j]) })
	var out []pop.Wakeup
	for _, p := range ps {
		out = append(out, pop.Wakeup{ID: p.id, Request: p.req, Expired: true})
	}
	b.polls = nil
	return out
}
