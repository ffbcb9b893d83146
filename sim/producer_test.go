package sim

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"popsim/model"
)

// A producer's keys come in blocks; each is still p<producer>-<seq>,
// across the blocks' edges and a power of ten inside a block, and when
// seq moved otherwise than one a key (the block's digits are then not
// the next number's).
func TestProducerKeysAcrossBlocks(t *testing.T) {
	for _, start := range []int64{0, 5, 1000 - keyBlock/2, 99_999_990} {
		p := &producer{prefix: "p3-", seq: start}
		for i := range 3*keyBlock + 7 {
			if i == 2*keyBlock+1 {
				p.seq += 17 // not the number the next block's digits hold
				p.keyAt = 0
			}
			want := "p3-" + strconv.FormatInt(p.seq, 10)
			if got := p.nextKey(); got != want {
				t.Fatalf("from %d, key of message %d: got %q, want %q", start, p.seq, got, want)
			}
			p.seq++
		}
	}
}

// incDigits is the number plus one, as strconv formats it, through every
// carry up to a new digit, with and without something before the digits.
func TestIncDigits(t *testing.T) {
	for _, head := range []string{"", "p12-"} {
		b := []byte(head + "0")
		for n := int64(0); n < 200_000; n++ {
			if want := head + strconv.FormatInt(n, 10); string(b) != want {
				t.Fatalf("after %d increments: %q, want %q", n, b, want)
			}
			b = incDigits(b, len(head))
		}
		for _, n := range []int64{9, 99, 999_999, 1<<62 - 1, 9_999_999_999} {
			got := string(incDigits([]byte(head+strconv.FormatInt(n, 10)), len(head)))
			if want := head + strconv.FormatInt(n+1, 10); got != want {
				t.Fatalf("incDigits(%s%d) = %q, want %q", head, n, got, want)
			}
		}
	}
}

// TestGroupsOfIsOnTopic: after setup, the groups a producer keeps for its
// messages are s.onTopic's for its topic, and a message on another topic
// gets that topic's (the map's look-up, which groupsOf skips).
func TestGroupsOfIsOnTopic(t *testing.T) {
	cfg := sharedTopic(4, "tags(TagA:1)",
		ConsumerSpec{Kind: PopPush, Group: "g1", Topic: "t", Threads: 1, Processing: dist("const(5ms)")},
		ConsumerSpec{Kind: PopPush, Group: "g2", Topic: "t", Threads: 1, Processing: dist("const(5ms)")},
		ConsumerSpec{Kind: PopPush, Group: "h", Topic: "u", Threads: 1, Processing: dist("const(5ms)")})
	cfg.Topics = append(cfg.Topics, TopicSpec{Name: "u", Queues: 1})
	cfg.Producers = append(cfg.Producers, ProducerSpec{Topic: "u", Arrivals: arrivals("backlog(1)")})
	s := newTestSim(t, cfg, RunOptions{})
	for _, p := range s.prods {
		for _, topic := range []string{"t", "u"} {
			want := s.onTopic[topic]
			if len(want) == 0 {
				t.Fatalf("no group consumes %s: the test shows nothing", topic)
			}
			m := &model.Message{Topic: strings.Clone(topic)} // another copy of the name, as a message's may be
			if got := s.groupsOf(p, m); !slices.Equal(got, want) {
				t.Fatalf("producer on %s: groupsOf(%s) = %v, want %v", p.topic, topic, got, want)
			}
		}
	}
}
