package pop

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// A revive round that resumes from the last round's carried state
// (carryFrom, resumeRound) does what one reading its queue again from its
// start does: two brokers, one reading again every round (reviveNoCarry),
// take the same pops, acks, renewals in the pop's millisecond (a later CK
// of the same merge key replaces the earlier), late acks (mocks, with
// EnableSkipLongAwaitingAck), a restart, releases, and at last a message
// that does not decode (every round after aborts), EnableSkipLongAwaitingAck
// switched between rounds (as a script's config command does), with a short
// reviveScanTime (cut rounds), and must give the same results, tick by
// tick. The scenario must reach each of those cases, and rounds must
// resume.
func TestReviveCarryMatchesReread(t *testing.T) {
	for _, skip := range []bool{true, false} {
		cfg := DefaultConfig()
		cfg.ReviveQueueNum = 1
		cfg.EnableSkipLongAwaitingAck = skip
		cfg.ReviveAckWaitMs = 1000
		cfg.ReviveScanTime = 300
		cfg.Bugs.SameMillisChangeInvisible = true // a renewal in the pop's millisecond keeps its merge key
		on, off := testBroker(t, cfg, 2), testBroker(t, cfg, 2)
		off.reviveNoCarry = true
		rt := model.ReviveTopic(cfg.ClusterName)
		r := rand.New(rand.NewPCG(40, uint64(len(rt))))
		type later struct {
			at clock.Time
			h  model.ReceiptHandle
		}
		var acks []later
		var resumed, mocks, replaced, cuts, aborted int
		now := clock.Epoch
		const steps = 3000 // of 100 ms
		for step := 0; step < steps; step++ {
			now = now.Add(100 * clock.Millisecond)
			both := func(f func(b *Broker) any) {
				t.Helper()
				if a, b := f(on), f(off); !reflect.DeepEqual(a, b) {
					t.Fatalf("skip=%v step %d: carried %+v, read again %+v", skip, step, a, b)
				}
			}
			if r.IntN(8) == 0 { // a few at once: a pop takes several, a renewal of its first has the pop CK's merge key
				body, q := []byte{byte(step)}, int32(r.IntN(2))
				for range 4 {
					both(func(b *Broker) any { return b.Put(now, &model.Message{Topic: "t", QueueID: q, Body: body}).Code })
				}
			}
			inv := []clock.Duration{clock.Second, 3 * clock.Second, 10 * clock.Second}[r.IntN(3)]
			var got []PopResult
			both(func(b *Broker) any {
				var res PopResult
				b.Pop(now, &PopRequest{ClientID: "c", ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 4, InvisibleTime: inv, BornTime: now}, &res)
				got = append(got, res)
				return res.Messages
			})
			for i := range got[0].Messages {
				h := got[0].Messages[i].Handle
				topic := got[0].Messages[i].Message.Topic
				switch x := r.IntN(20); {
				case x < 6:
					both(func(b *Broker) any { a := NewAckRequest("g", topic, &h); return b.Ack(now, &a) })
				case x < 9: // in the pop's millisecond: the renewal's CK has the pop's merge key
					both(func(b *Broker) any {
						c := NewChangeInvisibleTimeRequest("g", topic, &h, 3*inv)
						return b.ChangeInvisibleTime(now, &c)
					})
				case x < 16:
					acks = append(acks, later{at: now.Add(clock.Duration(500+r.IntN(15000)) * clock.Millisecond), h: h})
				}
			}
			kept := acks[:0]
			for _, a := range acks {
				if a.at > now {
					kept = append(kept, a)
					continue
				}
				both(func(b *Broker) any { ack := NewAckRequest("g", "t", &a.h); return b.Ack(now, &ack) })
			}
			acks = kept
			switch step {
			case steps / 3:
				both(func(b *Broker) any { return b.Restart(now) })
			case steps / 2, 3 * steps / 4: // a script's config command: the next round reads with the new one
				for _, b := range []*Broker{on, off} {
					b.cfg.EnableSkipLongAwaitingAck = !b.cfg.EnableSkipLongAwaitingAck
				}
			case 9 * steps / 10: // a CK message that does not decode: every round after it aborts
				both(func(b *Broker) any {
					return b.Put(now, &model.Message{Topic: rt, QueueID: 0, Tags: model.CkTag, Body: []byte("{not a CK")}).Code
				})
			}
			if step > steps/3 && step%50 == 0 {
				both(func(b *Broker) any { return b.ReleaseRevive() })
			}
			both(func(b *Broker) any { return b.CheckpointTick(now) })
			s := on.revivers[0]
			if s.pulling {
				if s.carry && s.msgs > 0 {
					resumed++
				}
				mocks += len(s.mockOrder)
				for _, rc := range s.all {
					if rc.replaced {
						replaced++
					}
				}
			} else if s.cut {
				cuts++
			}
			if err := on.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
		}
		aborted = int(on.Stats().ReviveRoundsAborted)
		if on.Stats() != off.Stats() {
			t.Fatalf("skip=%v: stats carried %+v, read again %+v", skip, on.Stats(), off.Stats())
		}
		t.Logf("skip=%v: %d resumed round ticks, %d mock, %d replaced CK sightings, %d cut, %d aborted rounds; %d revive reads",
			skip, resumed, mocks, replaced, cuts, aborted, on.Stats().ReviveReads)
		if resumed == 0 || replaced == 0 || cuts == 0 || aborted == 0 || skip && mocks == 0 {
			t.Fatalf("skip=%v: the scenario missed a case: %d resumed, %d mocks, %d replaced, %d cut, %d aborted", skip, resumed, mocks, replaced, cuts, aborted)
		}
	}
}
