package check

import (
	"testing"

	"popsim/model"
)

// A checker given a ChunkSpare takes its history chunks from it (the same
// arrays another checker recycled, their old bytes overwritten with junk
// here) and keeps exactly the events a checker without one keeps; its
// Recycle gives them back.
func TestChunkSpare(t *testing.T) {
	const size, events = 300, 6000
	var s ChunkSpare
	feed(t, New(Options{HistoryEvents: size}), size, events, nil).Recycle(&s)
	if s.Len() < 3 {
		t.Fatalf("the spare holds %d chunks after a recycle, want 3 or more", s.Len())
	}
	recycled := map[*byte]bool{}
	for _, b := range s.bufs {
		if len(b) != 0 {
			t.Fatalf("a spare chunk holds %d bytes, want it emptied", len(b))
		}
		b = b[:cap(b)]
		recycled[&b[0]] = true
		for i := range b {
			b[i] = 0xa5
		}
	}
	n := s.Len()
	c := New(Options{HistoryEvents: size})
	c.UseSpare(&s)
	reused := 0
	feed(t, c, size, events, func(buf []byte) {
		if cap(buf) > 0 && recycled[&buf[:1][0]] {
			reused++
		}
	})
	if reused == 0 || s.Len() >= n {
		t.Fatalf("Seal handed out %d recycled chunks, %d of %d left in the spare: the spare was not used", reused, s.Len(), n)
	}
	c.Recycle(&s)
	if s.Len() != n {
		t.Fatalf("the spare holds %d chunks after the second recycle, want %d", s.Len(), n)
	}
}

// feed gives c, which shares the test's buffer, events pulls, sealing the
// buffer every 3000 bytes (sealed tells each buffer Seal hands out), and
// checks that c's history keeps the last size of them.
func feed(t *testing.T, c *Checker, size, events int, sealed func([]byte)) *Checker {
	t.Helper()
	var buf []byte
	c.ShareBuffer(func() []byte { return buf })
	var kept []model.Event
	for i := range events {
		e := histTestEvent(i)
		e.Kind = model.EvPull
		from := len(buf)
		buf = e.AppendBinary(buf)
		c.ObserveEncoded(&e, buf[from:])
		kept = append(kept, e)
		if len(buf) >= 3000 {
			buf = c.Seal(buf, 4096)
			if sealed != nil {
				sealed(buf)
			}
		}
		checkKept(t, &c.hist, kept, size, i%97 == 0 || i >= events-50)
	}
	return c
}
