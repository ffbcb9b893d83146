package check

// ChunkSpare carries a finished checker's history chunks (the bytes its
// kept events' binary forms lie in) to a new checker, so that a process
// making many runs one after another does not allocate them anew for each
// (pop.Spare is the store's counterpart; sim.Reuse holds both). A
// chunk's old bytes are never read: a chunk is written from its start
// before the history indexes anything in it. A ChunkSpare is for one
// goroutine's checkers at a time.
type ChunkSpare struct {
	bufs [][]byte
}

// Len is how many chunks s holds.
func (s *ChunkSpare) Len() int { return len(s.bufs) }

// UseSpare makes s the place the history takes a new chunk from once its
// own spare chunks are used up, before allocating one.
func (c *Checker) UseSpare(s *ChunkSpare) { c.hist.reuse = s }

// Recycle adds every chunk the history holds to s and forgets them: c
// must not be used afterwards. Chunks c took from s came out of it, so s
// never holds more than the most chunks one checker held.
func (c *Checker) Recycle(s *ChunkSpare) {
	h := &c.hist
	for _, ch := range h.chunks {
		if ch.buf != nil {
			s.bufs = append(s.bufs, ch.buf[:0])
		}
	}
	s.bufs = append(s.bufs, h.spare...)
	if h.own != nil {
		s.bufs = append(s.bufs, h.own[:0])
	}
	h.chunks, h.spare, h.own = nil, nil, nil
}
