package pop

// inflightCounts is PopInflightMessageCounter's in-flight counts by
// queue, by pair id and then queue id: every pop stage that finds
// messages adds to one and every ack takes from one, which a map keyed by
// qkey paid for with a hash and a probe each (two on an ack). A count
// that falls to 0 or below is dropped, so a kept one is positive and 0
// stands for no entry. Only a pop stage adds, on a queue of its topic, so
// the lists grow no longer than the topics' queues; a key past them
// (a revive's or an ack's, from any queue id) has no entry.
type inflightCounts struct {
	by [][]int64
}

// get is k's count, 0 when none.
func (c *inflightCounts) get(k qkey) int64 {
	if int(k.pair) < len(c.by) {
		if l := c.by[k.pair]; k.qid >= 0 && int(k.qid) < len(l) {
			return l[k.qid]
		}
	}
	return 0
}

// add adds n > 0 to k's count (k.qid >= 0).
func (c *inflightCounts) add(k qkey, n int64) {
	for int(k.pair) >= len(c.by) {
		c.by = append(c.by, nil)
	}
	l := c.by[k.pair]
	for int(k.qid) >= len(l) {
		l = append(l, 0)
	}
	c.by[k.pair] = l
	l[k.qid] += n
}

// sub takes n from k's count, which it drops at 0 or below; nothing when
// k has none.
func (c *inflightCounts) sub(k qkey, n int64) {
	if c.get(k) != 0 {
		c.by[k.pair][k.qid] = max(c.by[k.pair][k.qid]-n, 0)
	}
}

// drop drops k's count.
func (c *inflightCounts) drop(k qkey) {
	if c.get(k) != 0 {
		c.by[k.pair][k.qid] = 0
	}
}

// reset drops every count, keeping the storage.
func (c *inflightCounts) reset() {
	for _, l := range c.by {
		clear(l)
	}
}

// each calls f for every count, by pair id, then queue id.
func (c *inflightCounts) each(f func(k qkey, n int64)) {
	for p, l := range c.by {
		for q, n := range l {
			if n != 0 {
				f(qkey{uint32(p), int32(q)}, n)
			}
		}
	}
}
