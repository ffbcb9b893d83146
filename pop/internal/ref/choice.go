package ref

import "popsim/pop"

// The retry-first choice and the all-queue scan order, written out from
// docs/rocketmq/kv-path.md §4 and checkpoint-path.md §3 without the
// engine's helpers.

// prioritized: a PRIORITY topic and a draw below the group's factor, on a
// release that has priority mode (5.4.0 on).
func (b *Broker) prioritized(topic, group string, draw int64) bool {
	t := b.topics[topic]
	g, ok := b.groups[group]
	return b.cfg.RetryChoiceRelease == "" && t != nil && t.cfg.MessageType == "PRIORITY" && ok && draw < g.PriorityFactor
}

// kvChoice: whether KV request n reads the retry topics first, and the
// rotation of its scan.
func (b *Broker) kvChoice(req *pop.PopRequest, n int64) (bool, int64) {
	if b.cfg.RetryChoiceRelease != "" {
		return n%5 == 0, n
	}
	prio := b.prioritized(req.Topic, req.ConsumerGroup, n%100)
	p := int64(b.cfg.PopFromRetryProbability)
	if prio {
		p = int64(b.cfg.PopFromRetryProbabilityForPriority)
	}
	if p > 100 {
		p = 100
	}
	first := false
	if p > 0 {
		first = n%(100/p) == 0
	}
	if prio {
		n = 0
	}
	return first, n
}

// fsChoice: whether FS request with draw q reads the retry topic first,
// and the rotation of its scan.
func (b *Broker) fsChoice(req *pop.PopRequest, q int32) (bool, int32) {
	switch b.cfg.RetryChoiceRelease {
	case pop.RetryChoice514:
		return q%5 == 0, q
	case pop.RetryChoice531:
		return q < b.cfg.PopFromRetryProbability, q
	}
	if b.prioritized(req.Topic, req.ConsumerGroup, int64(q)) {
		return q < b.cfg.PopFromRetryProbabilityForPriority, 0
	}
	return q < b.cfg.PopFromRetryProbability, q
}

// scanOrder lists the queues of an n-queue scan from rotation r.
func (b *Broker) scanOrder(n int32, r int64) []int32 {
	out := make([]int32, 0, n)
	desc := b.cfg.PriorityOrderAsc && b.cfg.RetryChoiceRelease == ""
	for i := int64(0); i < int64(n); i++ {
		pos := i
		if desc {
			pos = int64(n) - 1 - i
		}
		out = append(out, int32((pos+r)%int64(n)))
	}
	return out
}
