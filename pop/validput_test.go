package pop

import (
	"reflect"
	"strings"
	"testing"

	"popsim/clock"
	"popsim/model"
)

// TestValidPutIsValidate checks validPut against model.Message.Validate on
// every combination of a topic (normal, the longest sendable, retry and
// DLQ names, a retry topic longer than a producer may send to, and ones
// only the broker itself creates) with tags, born times and reconsume
// counts each valid or not, and that a refused Put answers Validate's
// error.
func TestValidPutIsValidate(t *testing.T) {
	b, err := New(KVConfig())
	must(t, err)
	names := []string{"t", strings.Repeat("t", model.MaxTopicLength), "%RETRY%g_t", "%DLQ%g", "%RETRY%" + strings.Repeat("g", 121)}
	for _, n := range names {
		must(t, b.CreateTopic(TopicConfig{Name: n, ReadQueueNums: 1, WriteQueueNums: 1}))
	}
	// the broker's own topics skip TopicValidator: '+' outside a retry
	// topic, a name past 255
	for _, n := range []string{"a+b", "%RETRY%" + strings.Repeat("g", 250)} {
		b.createTopic(TopicConfig{Name: n, ReadQueueNums: 1, WriteQueueNums: 1})
		names = append(names, n)
	}
	refused := 0
	for _, n := range names {
		tp := b.topicNamed(n)
		for _, tags := range []string{"", "a", "a|b", "é|", "ü"} {
			for _, born := range []int64{0, -1, 5} {
				for _, rc := range []int32{0, -1, 3} {
					m := model.Message{Topic: n, Tags: tags, BornTimestamp: born, ReconsumeTimes: rc}
					verr := m.Validate()
					if got := validPut(tp, &m); got != (verr == nil) {
						t.Fatalf("validPut(%.20s, tags %q, born %d, reconsume %d) = %v, Validate says %v", n, tags, born, rc, got, verr)
					}
					if verr == nil {
						continue
					}
					refused++
					if r := b.Put(clock.Epoch, &m); r.Code != model.MessageIllegal || r.Remark != verr.Error() {
						t.Fatalf("Put of an invalid message: %v %q, want %v %q", r.Code, r.Remark, model.MessageIllegal, verr.Error())
					}
				}
			}
		}
	}
	if refused == 0 || refused == len(names)*5*9 {
		t.Fatalf("%d of %d messages refused: the cases do not cover both answers", refused, len(names)*5*9)
	}
}

// TestPutIntoIsPut drives two like brokers with the same puts (good ones,
// refused ones, ones that wake parked pops), one through Put and one
// through PutInto into a result left dirty by the put before (a refusal's
// remark, wakeups): putInto writes every field in place, so the two
// results must be equal after every put.
func TestPutIntoIsPut(t *testing.T) {
	a, b := testBroker(t, KVConfig(), 2), testBroker(t, KVConfig(), 2)
	now := clock.Epoch
	var into PutResult
	woke := 0
	for i := range 40 {
		now = now.Add(clock.Millisecond)
		if i%3 == 0 { // park a pop on each, for the put to wake
			req := PopRequest{ConsumerGroup: "g", Topic: "t", QueueID: -1, MaxMsgNums: 1, InvisibleTime: 60 * clock.Second, PollTime: 20 * clock.Second}
			var ra, rb PopResult
			a.Pop(now, &req, &ra)
			b.Pop(now, &req, &rb)
		}
		m := model.Message{Topic: "t", QueueID: int32(i % 2)}
		switch i % 5 {
		case 1:
			m.Tags = "a|b" // refused: MessageIllegal
		case 2:
			m.Topic = "nope" // refused: TopicNotExist
		}
		got := a.Put(now, &m)
		b.PutInto(now, &m, &into)
		if !reflect.DeepEqual(normPut(got), normPut(into)) {
			t.Fatalf("put %d: Put %+v, PutInto %+v", i, got, into)
		}
		woke += len(got.Woken)
	}
	if woke == 0 {
		t.Fatal("no put woke a parked pop")
	}
}

// normPut is r with empty lists as nil: PutInto reuses Woken's storage.
func normPut(r PutResult) PutResult {
	if len(r.Woken) == 0 {
		r.Woken = nil
	}
	return r
}

// TestCopyFreshIsCopyMessage checks copyFresh against copyMessage into a
// zero message, for Body and Properties each nil, empty and not, and that
// a copy shares no storage with its source: every field equal, and a write
// to the source's body and properties after the copy leaves it unchanged.
func TestCopyFreshIsCopyMessage(t *testing.T) {
	bodies := [][]byte{nil, {}, []byte("body")}
	props := [][]model.Property{nil, {}, {{Key: "a", Value: "1"}, {Key: "b", Value: "2"}}}
	for _, body := range bodies {
		for _, ps := range props {
			src := model.Message{ID: 7, Topic: "t", QueueID: 1, QueueOffset: 3, Tags: "x", UniqKey: "u", Body: body, Properties: ps}
			var fresh, want model.Message
			copyFresh(&fresh, &src)
			copyMessage(&want, &src)
			if !reflect.DeepEqual(fresh, want) {
				t.Fatalf("body %q, properties %v: copyFresh %+v, copyMessage %+v", body, ps, fresh, want)
			}
			if len(body) > 0 {
				src.Body[0]++
				if fresh.Body[0] == src.Body[0] {
					t.Fatalf("body %q: the copy shares the source's body", body)
				}
				src.Body[0]--
			}
			if len(ps) > 0 {
				src.Properties[0].Value = "changed"
				if fresh.Properties[0].Value == "changed" {
					t.Fatalf("properties %v: the copy shares the source's properties", ps)
				}
				src.Properties[0].Value = "1"
			}
		}
	}
}
