package sim

// pollTable maps the broker's poll ids to the parked requests waiting on
// them (rocketMQ.polls): every park puts one and every wakeup takes one,
// so it is an open-addressed table (linear probing, backward-shift
// deletion) instead of a map, whose hashed writes and deletes cost several
// times as much. A slot is free when its value is nil; a request is never
// nil. Nothing iterates it in an order that matters: deleteIf visits every
// entry and only deletes.
type pollTable struct {
	keys []uint64
	vals []Request
	n    int
}

// slot is where id's probe sequence starts; len(keys) is a power of two.
func (t *pollTable) slot(id uint64) int {
	return int((id * 0x9e3779b97f4a7c15) >> 32 & uint64(len(t.keys)-1))
}

// get is the request parked under id, nil when none.
func (t *pollTable) get(id uint64) Request {
	if t.n == 0 {
		return nil
	}
	mask := len(t.keys) - 1
	for i := t.slot(id); t.vals[i] != nil; i = (i + 1) & mask {
		if t.keys[i] == id {
			return t.vals[i]
		}
	}
	return nil
}

// put parks r under id, replacing what was there.
func (t *pollTable) put(id uint64, r Request) {
	if r == nil {
		panic("sim: a nil request in the poll table")
	}
	if 2*(t.n+1) > len(t.keys) {
		t.grow()
	}
	mask := len(t.keys) - 1
	i := t.slot(id)
	for ; t.vals[i] != nil; i = (i + 1) & mask {
		if t.keys[i] == id {
			t.vals[i] = r
			return
		}
	}
	t.keys[i], t.vals[i] = id, r
	t.n++
}

// del removes id's entry, if any.
func (t *pollTable) del(id uint64) { t.take(id) }

// take removes id's entry and returns its request, nil when none: a
// wakeup's get and del in one probe.
func (t *pollTable) take(id uint64) Request {
	if t.n == 0 {
		return nil
	}
	mask := len(t.keys) - 1
	for i := t.slot(id); t.vals[i] != nil; i = (i + 1) & mask {
		if t.keys[i] == id {
			r := t.vals[i]
			t.removeAt(i)
			return r
		}
	}
	return nil
}

// removeAt empties slot i and shifts back the entries after it that
// probed past it, so that every probe sequence stays unbroken.
func (t *pollTable) removeAt(i int) {
	mask := len(t.keys) - 1
	t.n--
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		if t.vals[j] == nil {
			break
		}
		// j's entry may move to i when its home slot is not in (i, j]
		// (cyclically): its probe passed through i.
		if h := t.slot(t.keys[j]); (j-h)&mask >= (j-i)&mask {
			t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
			i = j
		}
	}
	t.keys[i], t.vals[i] = 0, nil
}

// grow doubles the table (16 slots at first) and re-inserts every entry.
func (t *pollTable) grow() {
	keys, vals := t.keys, t.vals
	n := max(16, 2*len(keys))
	t.keys, t.vals, t.n = make([]uint64, n), make([]Request, n), 0
	for i, v := range vals {
		if v != nil {
			t.put(keys[i], v)
		}
	}
}

// deleteIf deletes every entry whose request f reports true.
func (t *pollTable) deleteIf(f func(Request) bool) {
	for i := 0; i < len(t.vals); {
		if v := t.vals[i]; v != nil && f(v) {
			// removeAt may shift a later entry into i: look at i again
			t.removeAt(i)
			continue
		}
		i++
	}
}

// len is the number of entries.
func (t *pollTable) len() int { return t.n }
