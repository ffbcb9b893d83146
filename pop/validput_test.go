package pop

import (
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
