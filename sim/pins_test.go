package sim

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// pins against a reference: a map from owner to its pin. Owners add, move
// and drop pins, consumers crash (their incarnations' pins die), and every
// floor is the minimum offset of the live pins of its broker and topic, by
// queue; the owners' slots always index their own pins.
func TestPinsMatchReference(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cons := []*consumer{{idx: 0}, {idx: 1}}
		topics := []string{"a", "b"}
		slots := make([]int32, 8)
		ref := map[int]pin{}
		var p pins
		rt.Repeat(map[string]func(*rapid.T){
			"add": func(rt *rapid.T) {
				o := rapid.IntRange(0, len(slots)-1).Draw(rt, "owner")
				x := pin{topic: rapid.SampledFrom(topics).Draw(rt, "topic"), broker: int32(rapid.IntRange(0, 1).Draw(rt, "broker")),
					queue: int32(rapid.IntRange(0, 3).Draw(rt, "queue")), offset: rapid.Int64Range(0, 200).Draw(rt, "offset")}
				if rapid.Bool().Draw(rt, "client's") {
					x.c = cons[rapid.IntRange(0, 1).Draw(rt, "consumer")]
					x.epoch = x.c.epoch
				}
				p.drop(&slots[o]) // as a reused owner does before it pins again
				p.add(&slots[o], x)
				x.slot = &slots[o]
				ref[o] = x
			},
			"drop": func(rt *rapid.T) {
				o := rapid.IntRange(0, len(slots)-1).Draw(rt, "owner")
				p.drop(&slots[o])
				delete(ref, o)
			},
			"crash": func(rt *rapid.T) {
				cons[rapid.IntRange(0, 1).Draw(rt, "consumer")].epoch++
			},
			"floor": func(rt *rapid.T) {
				b, topic := int32(rapid.IntRange(0, 1).Draw(rt, "broker")), rapid.SampledFrom(topics).Draw(rt, "topic")
				got := p.floor(b, topic, nil)
				want := []int64{}
				for o, x := range ref {
					if x.c != nil && x.c.epoch != x.epoch {
						delete(ref, o) // floor drops it
						continue
					}
					if x.broker != b || x.topic != topic {
						continue
					}
					for int(x.queue) >= len(want) {
						want = append(want, math.MaxInt64)
					}
					want[x.queue] = min(want[x.queue], x.offset)
				}
				if len(got) != len(want) {
					rt.Fatalf("floor %v, want %v", got, want)
				}
				for q := range want {
					if got[q] != want[q] {
						rt.Fatalf("floor %v, want %v", got, want)
					}
				}
			},
			"": func(rt *rapid.T) {
				if len(p.ps) != len(ref) {
					rt.Fatalf("%d pins, want %d", len(p.ps), len(ref))
				}
				for o, s := range slots {
					x, ok := ref[o]
					switch {
					case !ok && s != 0:
						rt.Fatalf("owner %d without a pin has slot %d", o, s)
					case ok && (s < 1 || int(s) > len(p.ps) || p.ps[s-1] != x):
						rt.Fatalf("owner %d's slot %d does not hold its pin %+v", o, s, x)
					}
				}
			},
		})
	})
}
