package pop

import (
	"reflect"
	"strconv"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// A broker's Recycle hands its queues' full-size log chunks, cleared, to a
// LogSpare; a second broker using it stores its messages in those chunks
// (the same arrays: its first chunk grows into one), and reads back its own
// messages with nothing of the first broker's; the spare then holds as many
// chunks as before. (With the invariants build tag the spare chunks are
// poisoned, and take checks the poison is intact before clearing them.)
func TestLogSpare(t *testing.T) {
	const total = 3*logChunk + 5
	var s LogSpare
	b1 := testBroker(t, KVConfig(), 1)
	for i := range total {
		b1.Put(clock.Epoch, &model.Message{Topic: "t", Body: []byte("first"), Keys: "k" + strconv.Itoa(i)})
	}
	b1.Recycle(&s)
	if s.Len() != 4 {
		t.Fatalf("the spare holds %d chunks after a recycle, want 4", s.Len())
	}
	spare := map[*model.Message]bool{}
	for _, c := range s.chunks {
		spare[&c[:1][0]] = true
		if !invariants {
			for i := range c[:logChunk] {
				if !reflect.ValueOf(&c[:logChunk][i]).Elem().IsZero() {
					t.Fatalf("entry %d of a spare chunk is not cleared: %+v", i, c[:logChunk][i])
				}
			}
		}
	}
	b2 := testBroker(t, KVConfig(), 1)
	b2.UseSpare(&s)
	for i := range total {
		b2.Put(clock.Epoch, &model.Message{Topic: "t", Body: []byte("second"), Tags: "x" + strconv.Itoa(i)})
	}
	if s.Len() != 0 {
		t.Fatalf("%d chunks left in the spare, want every one taken", s.Len())
	}
	q := b2.topics["t"].queues[0]
	reused := 0
	for _, c := range q.log.chunks {
		if cap(c) == logChunk && spare[&c[:1][0]] {
			reused++
		}
	}
	if reused != 4 {
		t.Fatalf("%d of the second broker's chunks came from the spare, want 4", reused)
	}
	for i := range total {
		if m := q.log.slot(i); string(m.Body) != "second" || m.Keys != "" || m.Tags != "x"+strconv.Itoa(i) {
			t.Fatalf("entry %d: body %q keys %q tags %q", i, m.Body, m.Keys, m.Tags)
		}
	}
	if err := b2.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	b2.Recycle(&s)
	if s.Len() != 4 {
		t.Fatalf("the spare holds %d chunks after the second recycle, want 4", s.Len())
	}
}
