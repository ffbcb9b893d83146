package sim

import (
	"testing"

	"popsim/clock"
	"popsim/filter"
	"popsim/model"
	"popsim/pop"
)

// A subscription that does not accept every produced tag: the messages it
// does not match are owed to no one. The simulator settles each as a drop
// r=no-match naming the group when it is stored, the broker never hands
// one out, and the run settles with no violation, for every consumer
// kind: pop-push, simple and the Pull baseline, concurrent and orderly.
func TestUnsubscribedMessagesAreOwedToNoOne(t *testing.T) {
	for _, kind := range []ConsumerKind{PopPush, Simple, Pull} {
		cfg := tinyConfig(kind)
		cfg.Producers[0].Arrivals = arrivals("backlog(300)")
		cfg.Producers[0].Tags = tags("tags(A:1,B:1,C:1)")
		cfg.Consumers[0].Expression = "A || C"
		r := runKeep(t, cfg)
		noViolations(t, r)
		unowed := map[model.MsgID]bool{}
		for _, e := range only(r, model.EvDrop) {
			if e.Reason == model.RNoMatch && e.Group == "g" {
				unowed[e.Msg] = true
			}
		}
		for _, e := range only(r, model.EvDeliver) {
			if unowed[e.Msg] {
				t.Fatalf("%s: message %d delivered though the group does not subscribe to it", kind, e.Msg)
			}
		}
		s := r.Summary
		if n := int64(len(unowed)); n < 70 || n > 130 || s.DroppedByPolicy["no-match"] != n || s.Acked+n != s.Produced {
			t.Fatalf("%s: %d messages owed to no one (want about 100), dropped %v, acked %d of %d", kind, n, s.DroppedByPolicy, s.Acked, s.Produced)
		}
	}
}

// SQL92 subscriptions over producer-set properties, two groups on one
// topic: each group is delivered exactly the messages its condition
// matches (filter.Match on the stored message), the others are dropped as
// no-match for it alone, and the run settles. The simple consumer's proxy
// pops SQL92 whatever enablePropertyFilter says; the pop-push consumer
// needs it on.
func TestSQL92Subscriptions(t *testing.T) {
	cfg := sharedTopic(300, "tags(A:1,B:1)",
		ConsumerSpec{Kind: Simple, Group: "eu", Topic: "t", Threads: 2, Processing: dist("const(1ms)"), ExpressionType: "SQL92", Expression: "region = 'eu' AND price > 10"},
		ConsumerSpec{Kind: PopPush, Group: "priced", Topic: "t", Threads: 2, Processing: dist("const(1ms)"), ExpressionType: "SQL92", Expression: "price IS NOT NULL AND TAGS = 'A'"})
	cfg.Producers[0].Properties = properties("properties(1:set(region=eu,price=12),1:set(region=us,price=5),1:set())")
	e := pop.DefaultConfig()
	e.EnablePropertyFilter = true
	cfg.Engine.Settings = &e
	var brk *pop.Broker
	r := runKeep(t, cfg, scriptStep{after: clock.Millisecond, f: func(s *sim) { brk = s.eng.(*rocketMQ).b }})
	noViolations(t, r)
	subs := map[string]*filter.Filter{}
	for _, c := range cfg.Consumers {
		f, err := filter.Parse(c.ExpressionType, c.Expression)
		if err != nil {
			t.Fatal(err)
		}
		subs[c.Group] = f
	}
	msgs := map[model.MsgID]model.Message{}
	group := map[int32]string{}
	got := map[string]map[model.MsgID]bool{"eu": {}, "priced": {}}
	for _, e := range r.Events {
		switch e.Kind {
		case model.EvSubscribe:
			group[e.Client] = e.Group
		case model.EvProduce:
			m, ok := brk.Message(e.Topic, e.Queue, e.Offset)
			if !ok {
				t.Fatalf("message %d is not at %s/%d@%d", e.Msg, e.Topic, e.Queue, e.Offset)
			}
			msgs[e.Msg] = m
		case model.EvDeliver:
			got[group[e.Client]][e.Msg] = true
		case model.EvDrop:
			if e.Reason == model.RNoMatch {
				if got[e.Group][e.Msg] {
					t.Fatalf("message %d dropped as no-match for %s after a delivery", e.Msg, e.Group)
				}
			}
		}
	}
	for g, f := range subs {
		n := 0
		for id, m := range msgs {
			if f.Match(&m) != got[g][id] {
				t.Fatalf("%s: message %d (tag %q, %v): matches %v, delivered %v", g, id, m.Tags, m.Properties, f.Match(&m), got[g][id])
			}
			if got[g][id] {
				n++
			}
		}
		// a third of the messages are eu at 12; half of the two priced
		// thirds carry tag A
		if n < 70 || n > 130 {
			t.Errorf("%s: %d of 300 messages delivered, want about 100", g, n)
		}
	}
	if s := r.Summary; s.Produced != 600 || s.Acked+s.Dropped != 600 || s.DroppedByPolicy["no-match"] != s.Dropped {
		t.Errorf("produced %d, acked %d, dropped %v: want 600 (group, message) pairs, the unmatched ones no-match", s.Produced, s.Acked, s.DroppedByPolicy)
	}
}

// Orderly groups with a partial subscription: each consumes, in offset
// order per queue, only the messages it subscribes to; the checker's
// fifo-order judges every lease and the run settles with no violation.
// Failures make queues block and lend in place again over the gaps.
func TestOrderlyPartialSubscriptions(t *testing.T) {
	cfg := sharedTopic(300, "tags(A:1,B:1,C:1)",
		ConsumerSpec{Kind: PopPush, Group: "push", Topic: "t", Threads: 2, Processing: dist("const(1ms)"), Expression: "A || C", Outcomes: outcomes("outcomes(reconsume_later=0.05)")},
		ConsumerSpec{Kind: Simple, Group: "simple", Topic: "t", Threads: 2, Processing: dist("const(1ms)"), Expression: "B", Outcomes: outcomes("outcomes(reconsume_later=0.05)")},
		ConsumerSpec{Kind: PopPush, Group: "all", Topic: "t", Threads: 2, Processing: dist("const(1ms)")})
	cfg.Groups = []GroupSpec{{Name: "push", ConsumeMessageOrderly: true}, {Name: "simple", ConsumeMessageOrderly: true}, {Name: "all"}}
	r := runKeep(t, cfg)
	noViolations(t, r)
	group := map[int32]string{}
	unowed := map[string]map[model.MsgID]bool{"push": {}, "simple": {}}
	last := map[string]int64{} // group/queue: the highest offset delivered so far
	lent := 0
	for _, e := range r.Events {
		switch {
		case e.Kind == model.EvSubscribe:
			group[e.Client] = e.Group
		case e.Kind == model.EvDrop && e.Reason == model.RNoMatch:
			unowed[e.Group][e.Msg] = true
		case e.Kind == model.EvDeliver && group[e.Client] != "all":
			g := group[e.Client]
			if unowed[g][e.Msg] {
				t.Fatalf("%s was delivered message %d, which it does not subscribe to", g, e.Msg)
			}
			k := g + "/" + itoa(int64(e.Queue))
			if o, ok := last[k]; ok && e.Offset < o && e.Attempt == 0 {
				t.Fatalf("%s: a first delivery of offset %d after offset %d of queue %d", g, e.Offset, o, e.Queue)
			}
			last[k] = max(last[k], e.Offset)
			lent++
		}
	}
	s := r.Summary
	if s.Produced != 900 || s.Lost != 0 || s.Acked+s.Dropped != 900 || len(unowed["push"]) < 70 || len(unowed["simple"]) < 170 || lent < 300 {
		t.Fatalf("produced %d, acked %d, dropped %v, lost %d, unowed push %d simple %d, %d orderly deliveries",
			s.Produced, s.Acked, s.DroppedByPolicy, s.Lost, len(unowed["push"]), len(unowed["simple"]), lent)
	}
	if s.HeadOfLine == nil || s.HeadOfLine.Queues != 4 {
		t.Errorf("head-of-line %+v: want the 2 queues of each orderly group", s.HeadOfLine)
	}
}

// The broker's TAG filter compares tag hash codes: a message tagged BB
// passes a subscription to Aa (both hash to 2112). A POP group is lent it;
// the push consumer's processPopResult and the simple consumer's proxy
// (NO_MATCH) check the tag exactly, drop it (drop c=<client> l=<lease>
// r=no-match) and ack it, so it is never consumed. A Pull client drops it
// silently (processPullResult), so for a Pull group it is owed to no one
// from the start. Every group settles with no violation, orderly or not.
func TestTagCollisionsAreAckedAsNoMatch(t *testing.T) {
	for _, orderly := range []bool{false, true} {
		cfg := sharedTopic(200, "tags(Aa:1,BB:1,C:1)",
			ConsumerSpec{Kind: PopPush, Group: "push", Topic: "t", Threads: 2, Processing: dist("const(1ms)"), Expression: "Aa"},
			ConsumerSpec{Kind: Simple, Group: "simple", Topic: "t", Threads: 2, Processing: dist("const(1ms)"), Expression: "Aa"},
			ConsumerSpec{Kind: Pull, Group: "pull", Topic: "t", Threads: 2, Processing: dist("const(1ms)"), Expression: "Aa"})
		cfg.Groups = []GroupSpec{{Name: "push", ConsumeMessageOrderly: orderly}, {Name: "simple", ConsumeMessageOrderly: orderly}, {Name: "pull"}}
		r := runKeep(t, cfg)
		noViolations(t, r)
		group := map[int32]string{}
		consumed := map[string]int{}
		collided := map[string]int{}
		for _, e := range r.Events {
			switch {
			case e.Kind == model.EvSubscribe:
				group[e.Client] = e.Group
			case e.Kind == model.EvConsumeStart:
				consumed[group[e.Client]]++
			case e.Kind == model.EvDrop && e.Reason == model.RNoMatch && e.Lease != 0:
				collided[group[e.Client]]++
			}
		}
		s := r.Summary
		for _, g := range s.Groups {
			// about 1/3 Aa consumed; BB lent and dropped (POP) or dropped
			// when stored (Pull); C dropped when stored
			if g.Acked < 45 || g.Acked > 90 || g.Acked+g.Dropped != 200 || g.Lost != 0 {
				t.Errorf("orderly %v, %s: %+v", orderly, g.Group, g)
			}
			if n := consumed[g.Group]; int64(n) != g.Acked {
				t.Errorf("orderly %v, %s: %d consumptions for %d acked: a collided message was consumed", orderly, g.Group, n, g.Acked)
			}
		}
		if collided["push"] < 45 || collided["simple"] < 45 || collided["pull"] != 0 {
			t.Errorf("orderly %v: lent and dropped as no-match: %v; want the BB messages for push and simple, none for pull", orderly, collided)
		}
	}
}
