package pop

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// The engine stores its CK, ack and bAck messages unbuilt and builds
// them when read (reviveBody.fill). These tests write such messages
// through putCk, putAck and putBatchAck, directly and through the timer
// (with and without Bugs.DelayLevelTimer), read them back as a pull or
// Message would, and compare each with the message the engine used to
// build on every put: the same fields, built here the way it built them
// (wantRevive).

// wantRevive is the revive-topic message RocketMQ's buildCkMsg and
// buildAckMsg make (and the engine built eagerly before it stored them
// unbuilt): tag, unique id and JSON body, born at bornMs, with the
// deliver time and, for a CK with messages, its first lease as
// properties (set with SetProperty, which keeps them sorted), stored at
// offset off at storeMs.
func wantRevive(topic string, rq int32, tag, uniq string, body []byte, bornMs, deliverMs int64, lease model.LeaseID, off, storeMs int64) model.Message {
	m := model.Message{Topic: topic, QueueID: rq, Tags: tag, UniqKey: uniq, Body: body, BornTimestamp: bornMs, QueueOffset: off,
		StoreTimestamp: storeMs}
	if err := m.SetProperty(model.PropertyTimerDeliverMs, strconv.FormatInt(deliverMs, 10)); err != nil {
		panic(err)
	}
	if lease != 0 {
		if err := m.SetProperty(PropertyLease, strconv.FormatUint(uint64(lease), 10)); err != nil {
			panic(err)
		}
	}
	return m
}

// randomCk is a CK the engine may write: names of varied lengths (an
// empty topic or group for a skipped CK, an empty broker name for a
// re-put that lost it), offset lists of 0 to 32 entries, a re-put count.
func randomCk(r *rand.Rand, now int64) model.PopCheckPoint {
	names := []string{"", "t", "orders", "%RETRY%g_t", "a\"quoted\\name"}
	ck := model.PopCheckPoint{Num: int8(r.IntN(33)), PopTime: now - r.Int64N(5000), InvisibleTime: 1000 + r.Int64N(120_000),
		StartOffset: r.Int64N(1 << 40), QueueID: int32(r.IntN(8)), Topic: names[1+r.IntN(4)], CID: names[1+r.IntN(4)],
		BrokerName: []string{"broker-a", "", "b"}[r.IntN(3)]}
	if r.IntN(10) == 0 {
		ck.Topic = ""
	}
	if r.IntN(10) == 0 {
		ck.CID = ""
	}
	ck.QueueOffsetDiff = make([]int32, ck.Num)
	for i := range ck.QueueOffsetDiff {
		ck.QueueOffsetDiff[i] = int32(i + r.IntN(3))
	}
	if r.IntN(4) == 0 {
		ck.RePutTimes, ck.HasRePutTimes = strconv.Itoa(r.IntN(17)), true
	}
	return ck
}

// randomAck is an ack of a CK: an ack message's (AckOffset an offset) or
// a bAck's (AckOffset -1, or 0 as the buffer writes it).
func randomAck(r *rand.Rand, ck *model.PopCheckPoint, batch bool) model.AckMsg {
	a := model.AckMsg{AckOffset: ck.StartOffset + r.Int64N(40), StartOffset: ck.StartOffset, ConsumerGroup: ck.CID, Topic: ck.Topic,
		QueueID: ck.QueueID, PopTime: ck.PopTime, BrokerName: ck.BrokerName}
	if batch {
		a.AckOffset = []int64{-1, 0}[r.IntN(2)]
	}
	return a
}

func TestReviveMessagesBuiltAsWritten(t *testing.T) {
	for _, delayLevels := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Bugs.DelayLevelTimer = delayLevels
		b := testBroker(t, cfg, 1)
		r := rand.New(rand.NewPCG(7, 37))
		now := clock.Epoch.Add(clock.Hour).Millis()
		topic := b.reviveTopicName()
		var wants []model.Message // in put order, their offsets unknown until stored
		var fails []WriteFailure
		for i := range 600 {
			now += r.Int64N(50)
			ck := randomCk(r, now)
			rq := int32(r.IntN(int(cfg.ReviveQueueNum)))
			deliver := now - r.Int64N(3000) // due at once
			if r.IntN(2) == 0 {
				deliver = now + 1 + r.Int64N(60_000) // through the timer
			}
			var st putStatus
			var want model.Message
			switch i % 3 {
			case 0:
				ck.InvisibleTime = deliver + AckTimeInterval - ck.PopTime
				first := b.lease.last + 1 + model.LeaseID(r.IntN(1000))
				mkey := ck.MergeKey()
				st = b.putCk(now, b.newCkBody(&ck), mkey, mkHash(mkey), nil, rq, first, &fails)
				lease := first
				if ck.Num == 0 {
					lease = 0
				}
				want = wantRevive(topic, rq, model.CkTag, ck.UniqueID(), ck.AppendJSON(nil), now, deliver, lease, 0, 0)
			case 1:
				a := randomAck(r, &ck, false)
				st = b.putAck(now, &a, nil, rq, deliver, &fails)
				want = wantRevive(topic, rq, model.AckTag, a.UniqueID(), a.AppendJSON(nil), now, deliver, 0, 0, 0)
			default:
				a := model.BatchAckMsg{AckMsg: randomAck(r, &ck, true)}
				for range r.IntN(5) {
					a.AckOffsetList = append(a.AckOffsetList, ck.StartOffset+r.Int64N(40))
				}
				st = b.putBatchAck(now, &a, nil, rq, deliver, &fails)
				want = wantRevive(topic, rq, model.BatchAckTag, a.UniqueID(), a.AppendJSON(nil), now, deliver, 0, 0, 0)
			}
			if st != putOK {
				t.Fatalf("put %d: status %d", i, st)
			}
			if delayLevels {
				due := now + delayLevel(deliver-now)
				if err := want.SetProperty(model.PropertyTimerDeliverMs, strconv.FormatInt(due, 10)); err != nil {
					t.Fatal(err)
				}
			}
			wants = append(wants, want)
		}
		checkTimerEntries(t, b, wants)
		b.advanceTimer(now + 2*clock.Hour.Millis()) // every held message to its queue
		checkReviveMessages(t, b, wants)
	}
}

// checkReviveMessages reads every revive-topic message b holds, as
// Message and a pull read them, and finds each in wants (by unique id and
// tag: the random puts repeat none), which must all be found.
func checkReviveMessages(t *testing.T, b *Broker, wants []model.Message) {
	t.Helper()
	left := slices.Clone(wants)
	topic := b.reviveTopicName()
	for rq := range b.cfg.ReviveQueueNum {
		q := b.queue(topic, rq)
		for off := q.min; off < q.maxOffset(); off++ {
			got, ok := b.Message(topic, rq, off)
			if !ok {
				t.Fatalf("revive queue %d offset %d: no message", rq, off)
			}
			i := slices.IndexFunc(left, func(m model.Message) bool { return m.UniqKey == got.UniqKey && m.Tags == got.Tags })
			if i < 0 {
				t.Fatalf("revive queue %d offset %d: %s %s was not written (or read twice)", rq, off, got.Tags, got.UniqKey)
			}
			want := left[i]
			want.QueueOffset, want.StoreTimestamp = off, got.StoreTimestamp
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("revive queue %d offset %d:\n got %+v\nwant %+v", rq, off, got, want)
			}
			if again := q.at(off); !reflect.DeepEqual(*again, got) {
				t.Fatalf("revive queue %d offset %d: read again as %+v", rq, off, *again)
			}
			left = slices.Delete(left, i, i+1)
		}
	}
	if len(left) > 0 {
		t.Fatalf("%d messages written were not stored, the first %+v", len(left), left[0])
	}
}

// checkTimerEntries checks that State lists every message the timer
// holds with the tag and unique id of one of wants, and that it holds
// some.
func checkTimerEntries(t *testing.T, b *Broker, wants []model.Message) {
	t.Helper()
	held := b.State().Checkpoint.Timer
	for _, e := range held {
		if !slices.ContainsFunc(wants, func(m model.Message) bool {
			return m.UniqKey == e.UniqKey && m.Tags == e.Tag && m.QueueID == e.ReviveQueue
		}) {
			t.Fatalf("the timer holds %+v, which was not written", e)
		}
	}
	if len(held) == 0 {
		t.Fatal("the timer holds nothing")
	}
}

// A failed revive-topic write reports the unique id of the message it
// did not write, which the engine never built.
func TestReviveWriteFailureNamesUniqueID(t *testing.T) {
	cfg := DefaultConfig()
	b := testBroker(t, cfg, 1)
	if err := b.SetFaults(Faults{Writes: []WriteFault{{Topic: b.reviveTopicName(), QueueID: -1, Count: -1}}}); err != nil {
		t.Fatal(err)
	}
	now := clock.Epoch.Add(clock.Hour).Millis()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 60 {
		ck := randomCk(r, now)
		var fails []WriteFailure
		var want string
		switch i % 3 {
		case 0:
			mkey := ck.MergeKey()
			b.putCk(now, b.newCkBody(&ck), mkey, mkHash(mkey), nil, 1, 5, &fails)
			want = ck.UniqueID()
		case 1:
			a := randomAck(r, &ck, false)
			b.putAck(now, &a, nil, 1, now+1000, &fails)
			want = a.UniqueID()
		default:
			a := model.BatchAckMsg{AckMsg: randomAck(r, &ck, true), AckOffsetList: []int64{ck.StartOffset, ck.StartOffset + 2}}
			b.putBatchAck(now, &a, nil, 1, now+1000, &fails)
			want = a.UniqueID()
		}
		if len(fails) != 1 || fails[0].UniqKey != want || fails[0].Topic != b.reviveTopicName() || fails[0].QueueID != 1 {
			t.Fatalf("put %d: failures %+v, want one naming %s", i, fails, want)
		}
	}
}

// A CK the engine makes has one copy, in the body it keeps for the CK's
// message (newCkBody): its ref and wrapper hold that body's CK, and the
// revive queue stores that very body once the message reaches it, with
// the CK as made but for its revive offset. Pops with and without the
// buffer, acks, renewals and revive rounds (whose re-puts make CKs too).
func TestCkHeldOnce(t *testing.T) {
	for _, merge := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.EnablePopBufferMerge = merge
		cfg.ReviveQueueNum = 2
		b := testBroker(t, cfg, 2)
		now := clock.Epoch
		homes := map[*ckBody]model.PopCheckPoint{} // each ref's body, and its CK as made
		note := func() {
			for r := range b.ckl.byFirst.all() {
				if r.dropped {
					continue
				}
				if _, ok := homes[r.home()]; !ok {
					homes[r.home()] = *r.ck()
				}
			}
			for _, w := range b.buf.order {
				if w.ck != w.ref.ck() {
					t.Fatalf("merge=%v: wrapper %q holds a CK of its own", merge, w.mkey)
				}
			}
		}
		var res PopResult
		for i := range 200 {
			for k := range 3 {
				b.Put(now, &model.Message{Topic: "t", QueueID: int32((i + k) % 2), Body: []byte("x")})
			}
			b.Pop(now, &PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 3, InvisibleTime: 20 * clock.Second}, &res)
			note()
			for j := range res.Messages {
				p := &res.Messages[j]
				switch j % 3 {
				case 0:
					ack := NewAckRequest("g", p.Message.Topic, &p.Handle)
					b.Ack(now, &ack)
				case 1:
					ch := NewChangeInvisibleTimeRequest("g", p.Message.Topic, &p.Handle, 30*clock.Second)
					b.ChangeInvisibleTime(now, &ch)
				}
			}
			note()
			now = now.Add(100 * clock.Millisecond)
			b.CheckpointTick(now)
			note()
		}
		for end := now.Add(3 * clock.Minute); now < end; now = now.Add(clock.Second) {
			b.CheckpointTick(now)
			note()
		}
		stored := 0
		for rq := range cfg.ReviveQueueNum {
			q := b.queue(b.reviveTopicName(), rq)
			if q == nil {
				t.Fatalf("merge=%v: no revive queue %d", merge, rq)
			}
			for o := q.min; o < q.maxOffset(); o++ {
				m, d := q.log.slot(int(o-q.min)), *q.revs.slot(int(o - q.min))
				if d == nil || d.c() == nil {
					continue
				}
				want, ok := homes[d.c()]
				if !ok || m.Tags != model.CkTag {
					continue
				}
				stored++
				got := d.c().ck
				if got.ReviveOffset != o {
					t.Fatalf("merge=%v: CK at revive offset %d says %d", merge, o, got.ReviveOffset)
				}
				got.ReviveOffset = 0
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("merge=%v: CK at revive offset %d stored as %+v, made as %+v", merge, o, got, want)
				}
			}
		}
		if stored == 0 || len(homes) < 100 {
			t.Fatalf("merge=%v: %d CK bodies stored of %d made", merge, stored, len(homes))
		}
	}
}
