package sim

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"popsim/model"
)

// A producer's keys come in blocks; each is still p<producer>-<seq>,
// across the blocks' edges.
func TestProducerKeysAcrossBlocks(t *testing.T) {
	p := &producer{prefix: "p3-", seq: 5}
	for range 3*keyBlock + 7 {
		want := "p3-" + strconv.FormatInt(p.seq, 10)
		if got := p.nextKey(); got != want {
			t.Fatalf("key of message %d: got %q, want %q", p.seq, got, want)
		}
		p.seq++
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
