package pop

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"popsim/model"
)

// timerRef is the timer's order by definition: every held message and
// its delivery time, the next being the least (due, put order), over all
// queues or one.
type timerRef struct {
	held []*reviveBody
	due  map[*reviveBody]int64
	seq  uint64
}

func (r *timerRef) less(a, b *reviveBody) bool { return timerLess(r.due[a], a.seq, r.due[b], b.seq) }

func (r *timerRef) minOf(q int32) *reviveBody {
	var best *reviveBody
	for _, m := range r.held {
		if (q < 0 || int32(m.rq) == q) && (best == nil || r.less(m, best)) {
			best = m
		}
	}
	return best
}

// TestTimerMatchesOrder puts and delivers at random against timerRef:
// delivery times in slots of a precision, mostly at or near the latest
// (as CKs and acks come), sometimes far before it or beyond it, on a few
// revive queues, with deliveries interleaved; min, minFor, each and n
// must agree with the reference after every step (dueBy too, at a time
// near now), add must report whether the put is its queue's next, and
// deliveries between two puts must come in (due, put)
// order.
func TestTimerMatchesOrder(t *testing.T) {
	for _, prec := range []int64{1, 1000} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("prec=%d/seed=%d", prec, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, uint64(prec)))
				var tm timerStore
				ref := timerRef{due: map[*reviveBody]int64{}}
				now := int64(1_000_000)
				var lastDelivered *reviveBody // a copy, due as lastDue
				var lastDue int64
				for step := 0; step < 20000; step++ {
					switch x := r.IntN(100); {
					case x < 55: // a put
						now += r.Int64N(3 * prec)
						var d int64
						switch y := r.IntN(10); {
						case y < 6:
							d = now + 60*prec // a CK's or ack's revive time
						case y < 9:
							d = now + r.Int64N(70*prec) // a late ack, a renewal
						default:
							d = now + r.Int64N(2000*prec) // far ahead
						}
						d = (d + prec - 1) / prec * prec
						a := &ackBody{src: unsafe.Pointer(&model.AckMsg{})} // an ack message's body, as putRevive holds it
						a.part, a.kind, a.rq, a.born = ackPart, ackKind, uint16(r.IntN(4)), now
						m := &a.reviveBody
						next := tm.add(m, d)
						ref.due[m] = d
						ref.seq++
						if m.seq != ref.seq {
							t.Fatalf("step %d: seq %d, want %d", step, m.seq, ref.seq)
						}
						ref.held = append(ref.held, m)
						if want := ref.minOf(int32(m.rq)) == m; next != want {
							t.Fatalf("step %d: add reports the put its queue's next: %v, want %v", step, next, want)
						}
						lastDelivered = nil // it may come before the last delivered
					case x < 95: // deliver the next
						if r.IntN(8) == 0 { // as touch does before a delivery: no change
							tm.warm(now + r.Int64N(100*prec))
						}
						want := ref.minOf(-1)
						got, due, ok := tm.min()
						if got != want || ok != (want != nil) || ok && due != ref.due[want] {
							t.Fatalf("step %d: min %v due at %d, want %v", step, got, due, want)
						}
						if got == nil {
							continue
						}
						if lastDelivered != nil && timerLess(due, got.seq, lastDue, lastDelivered.seq) {
							t.Fatalf("step %d: delivered out of order", step)
						}
						tm.removeMin(got)
						ref.held = slices.DeleteFunc(ref.held, func(m *reviveBody) bool { return m == got })
						delete(ref.due, got)
						lastDelivered, lastDue = got, due
					default: // deliver one queue's next
						q := int32(r.IntN(5))
						want := ref.minOf(q)
						got, due, ok := tm.minFor(q)
						if got != want || ok != (want != nil) || ok && due != ref.due[want] {
							t.Fatalf("step %d: minFor(%d) %v due at %d, want %v", step, q, got, due, want)
						}
						if got != nil {
							tm.removeMin(got)
							ref.held = slices.DeleteFunc(ref.held, func(m *reviveBody) bool { return m == got })
							delete(ref.due, got)
							lastDelivered = nil // a queue's next may precede the last global one
						}
					}
					if tm.n != len(ref.held) {
						t.Fatalf("step %d: n %d, want %d", step, tm.n, len(ref.held))
					}
					// dueBy never hides a due message, and is exact once
					// the first is known
					first := ref.minOf(-1)
					probes := []int64{now + r.Int64N(200*prec) - 100*prec}
					if first != nil {
						probes = append(probes, ref.due[first], ref.due[first]-1)
					}
					for _, p := range probes {
						if due := first != nil && ref.due[first] <= p; tm.dueBy(p) != due && (due || tm.firstOK) {
							t.Fatalf("step %d: dueBy(%d) %v, a message due by then: %v (first known: %v)", step, p, tm.dueBy(p), due, tm.firstOK)
						}
					}
					if step%500 == 0 {
						var got []*reviveBody
						tm.each(func(m *reviveBody, due int64) {
							if due != ref.due[m] {
								t.Fatalf("step %d: each gives a message due at %d, put due at %d", step, due, ref.due[m])
							}
							got = append(got, m)
						})
						want := slices.Clone(ref.held)
						slices.SortFunc(want, func(a, b *reviveBody) int {
							if c := cmp.Compare(a.rq, b.rq); c != 0 {
								return c
							}
							if ref.less(a, b) {
								return -1
							}
							return 1
						})
						if !slices.Equal(got, want) {
							t.Fatalf("step %d: each gives %d messages out of (queue, due, put) order", step, len(got))
						}
						for q := range tm.queues {
							if err := checkTimerQueue(int32(q), &tm.queues[q]); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
			})
		}
	}
}

// TestTimerWarmReadsAhead: through a burst of deliveries from two slots,
// the messages of the head slot from its head to the end of the chunk
// after the head's have been read (each message's born time is its own
// bit of the sum warm keeps), and none further; the next slot is read
// only once it is the head and due by the time warm was given.
func TestTimerWarmReadsAhead(t *testing.T) {
	var tm timerStore
	var ms []*reviveBody
	for i := range 60 {
		a := &ackBody{src: unsafe.Pointer(&model.AckMsg{})}
		a.part, a.kind, a.born = ackPart, ackKind, 1<<i
		m := &a.reviveBody
		tm.add(m, 1000+int64(i/40)*1000) // 40 due at 1000, 20 at 2000
		ms = append(ms, m)
	}
	tm.warm(1000)
	for i := range 40 {
		end := min(i&^(warmChunk-1)+2*warmChunk, 40)
		want := int64(1)<<end - int64(1)<<i
		if got := tm.warmed &^ (int64(1)<<i - 1); got != want {
			t.Fatalf("before delivery %d: read %b beyond the delivered, want %b", i, got, want)
		}
		tm.removeMin(ms[i])
	}
	if tm.warmed != 1<<40-1 {
		t.Fatalf("the slot due after warm's time was read: %b", tm.warmed)
	}
	tm.warm(2000)
	if want := int64(1)<<60 - 1; tm.warmed != want {
		t.Fatalf("after warm(2000): read %b, want %b", tm.warmed, want)
	}
}

// A slot made after every held message (a CK's, as a rule) has room for
// as many messages as the queue's last slot has (timerSlot.reserve), so
// that its messages do not grow its array one doubling at a time; a slot
// reused with room enough keeps its array.
func TestTimerNewSlotReserved(t *testing.T) {
	var tm timerStore
	const n = 37
	for range n {
		tm.add(&reviveBody{rq: 1}, 5000)
	}
	tm.add(&reviveBody{rq: 1}, 6000)
	tq := &tm.queues[1]
	if s := tq.slots[len(tq.slots)-1]; s.due != 6000 || len(s.msgs) != 1 || cap(s.msgs) < n {
		t.Fatalf("new slot due %d holds %d messages with room for %d, want 1 at 6000 with room for %d", s.due, len(s.msgs), cap(s.msgs), n)
	}
	for range n + 1 { // both slots delivered: freed, their arrays kept
		m, _, _ := tm.minFor(1)
		tm.removeMin(m)
	}
	tm.add(&reviveBody{rq: 1}, 7000) // the queue's first slot: none to go by, a free one
	if s := tq.slots[len(tq.slots)-1]; s.due != 7000 || cap(s.msgs) < n {
		t.Fatalf("reused slot due %d has room for %d, want its array's %d", s.due, cap(s.msgs), n)
	}
}
