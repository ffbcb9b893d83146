package pop

// cqTable is the checkpoint buffer's commit queues by lock key: a row of
// pointers a pair, indexed by queue id (queues' ids are dense and small,
// as the offsets' rows are). Every stage of a pop asks for its queue's
// (getLatestOffset), nearly always for another queue than the last one
// asked for; a map[qkey] lookup cost ~45 instructions and a hash of the
// key (default run: 58.6 k lookups).
type cqTable struct {
	rows [][]*commitQueue
	n    int // queues held
}

// get is k's commit queue, nil when none.
func (t *cqTable) get(k qkey) *commitQueue {
	if int(k.pair) < len(t.rows) {
		if r := t.rows[k.pair]; uint32(k.qid) < uint32(len(r)) {
			return r[k.qid]
		}
	}
	return nil
}

// set files cq under k, which holds none; k's queue id is not negative
// (a lock key is a queue's).
func (t *cqTable) set(k qkey, cq *commitQueue) {
	for int(k.pair) >= len(t.rows) {
		t.rows = append(t.rows, nil)
	}
	r := t.rows[k.pair]
	for int(k.qid) >= len(r) {
		r = append(r, nil)
	}
	t.rows[k.pair] = r
	r[k.qid] = cq
	t.n++
}

// delete takes k's commit queue out, if any.
func (t *cqTable) delete(k qkey) {
	if int(k.pair) < len(t.rows) {
		if r := t.rows[k.pair]; uint32(k.qid) < uint32(len(r)) && r[k.qid] != nil {
			r[k.qid] = nil
			t.n--
		}
	}
}

// len is the number of commit queues held.
func (t *cqTable) len() int { return t.n }
