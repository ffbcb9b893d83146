package check

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"popsim/model"
)

// oblQueue must behave as the slice it replaces, consumed from its front:
// the same obligations out in the order they went in, whatever the mix
// of pushes and pops (runs of each, so that the ring wraps, fills and
// doubles with its head anywhere).
func TestOblQueueMatchesSlice(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		var q oblQueue
		var ref []obligation
		next := model.MsgID(1)
		for step := 0; step < 20000; step++ {
			if burst := r.IntN(40); r.IntN(2) == 0 {
				for range burst {
					o := obligation{msg: next, seq: int64(next) * 3}
					next++
					*q.add() = o
					ref = append(ref, o)
				}
			} else {
				for ; burst > 0 && len(ref) > 0; burst-- {
					if got := *q.first(); got != ref[0] {
						t.Fatalf("seed %d step %d: first %+v, want %+v", seed, step, got, ref[0])
					}
					q.pop()
					ref = ref[1:]
				}
			}
			if q.n != len(ref) || len(q.ring)&(len(q.ring)-1) != 0 {
				t.Fatalf("seed %d step %d: %d held in a ring of %d, want %d held in a power of two", seed, step, q.n, len(q.ring), len(ref))
			}
		}
	}
}

// arrival writes an obligation's six fields one by one into the slot add
// gives it, and parked a pollReq's five into its slot (a slot keeps what
// it held before): a field added to either must be written there too.
func TestInPlaceFields(t *testing.T) {
	if n := reflect.TypeFor[obligation]().NumField(); n != 6 {
		t.Fatalf("obligation has %d fields; arrival writes 6", n)
	}
	// And parked a pollReq's five.
	if n := reflect.TypeFor[pollReq]().NumField(); n != 5 {
		t.Fatalf("pollReq has %d fields; parked writes 5", n)
	}
}

// answerOne, when it takes an answer, leaves the client's parked
// receives and its topic's counts as answer does; when it declines, it
// changes nothing.
func TestAnswerOneAsAnswer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 3).Draw(t, "parked")
		paused := rapid.Bool().Draw(t, "paused")
		group := rapid.Int32Range(0, 1).Draw(t, "group")
		type poll struct {
			queue, grp int32
			counted    bool // its topicWait is remembered (else nil)
			sameRid    bool // parked by the same receive as the one before
		}
		polls := make([]poll, n)
		for i := range polls {
			polls[i] = poll{rapid.Int32Range(-1, 1).Draw(t, "queue"), rapid.Int32Range(0, 1).Draw(t, "grp"), rapid.Bool().Draw(t, "counted"), rapid.Bool().Draw(t, "sameRid")}
		}
		// build makes the same wakeup each time: client 0 with the drawn
		// receives parked on topic "t", counted as parked would.
		build := func() (*wakeup, *waitClient) {
			w := newWakeup(DefaultWakeupSlack)
			x := w.client(0)
			x.group, x.paused = group, paused
			rid := uint64(0)
			for _, p := range polls {
				if !p.sameRid {
					rid++
				}
				r := pollReq{topic: "t", rid: rid, queue: p.queue, grp: p.grp}
				tw := w.wait(waitKey{group: p.grp, topic: "t"})
				if p.counted {
					r.t = tw
				}
				x.polls = append(x.polls, r)
				w.wait(waitKey{group: group, topic: "t"}).count(&r, paused, 1)
			}
			return &w, x
		}
		state := func(w *wakeup, x *waitClient) string {
			s := fmt.Sprintf("%d parked;", len(x.polls))
			for _, g := range []int32{0, 1} {
				if tw := w.topics[waitKey{group: g, topic: "t"}]; tw != nil {
					s += fmt.Sprintf(" group %d: all %d paused %d gen %d queues %v;", g, tw.all, tw.paused, tw.gen, tw.byQueue)
				}
			}
			return s
		}
		w1, x1 := build()
		before := state(w1, x1)
		took := x1.answerOne()
		w2, x2 := build()
		if took {
			w2.answer(&model.Event{Kind: model.EvReceived, Client: 0})
		}
		if got, want := state(w1, x1), state(w2, x2); got != want {
			t.Fatalf("answerOne (took %v) leaves %s, want %s (before: %s)", took, got, want, before)
		}
	})
}
