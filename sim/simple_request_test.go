package sim

import (
	"testing"

	"popsim/clock"
	"popsim/proxy"
)

// TestSimpleReceiveRequestIsTheLiteral: a simple consumer's receive,
// whose request keeps its fixed part from the client's creation
// (receiveRequest), asks its proxy for the same pop as a request written
// out whole from the client's settings, over receives of several sizes,
// a reentrant attempt and a restart's new client id.
func TestSimpleReceiveRequestIsTheLiteral(t *testing.T) {
	cfg := sharedTopic(4, "tags(TagA:1)", ConsumerSpec{Kind: Simple, Group: "g", Topic: "t", Threads: 3, Batch: 2, Processing: dist("const(5ms)")})
	cfg.Consumers[0].Settings = &SimpleSettings{InvisibleTime: 40 * clock.Second, PollTime: 7 * clock.Second, AutoRenew: true, Reentrant: true}
	s := newTestSim(t, cfg, RunOptions{})
	c := s.cons[0]
	p := c.cl.(*simpleConsumer)
	for i, local := range []int{0, 2, 1, 0} {
		if i == 3 {
			c.clientID = "c0-7" // a restart's
		}
		p.local, p.popOut, p.attempt = local, nil, ""
		p.receive(s)
		r := p.popOut
		if r == nil {
			t.Fatalf("receive %d sent nothing", i)
		}
		n := min(c.spec.Threads-local, int(c.spec.Batch))
		want, st := p.px.PopRequest(0, &proxy.ReceiveRequest{
			ClientID: c.clientID, Group: c.g.name, Topic: c.g.topic, ExpressionType: c.spec.ExpressionType, Expression: c.spec.Expression, BatchSize: int32(n),
			InvisibleTime: p.set.InvisibleTime, AutoRenew: p.set.AutoRenew,
			LongPollingTimeout: p.set.PollTime, Timeout: p.set.PollTime + s.cfg.Network.PollTimeoutSlack, RequestTimeout: s.cfg.Network.RequestTimeout,
			AttemptID: p.attempt,
		})
		if !st.IsOK() || r.pop != want {
			t.Fatalf("receive %d: pop %+v, want %+v (%v)", i, r.pop, want, st)
		}
		if r.timer == nil || r.timer.at != s.q.now().Add(p.set.PollTime+s.cfg.Network.PollTimeoutSlack) {
			t.Fatalf("receive %d: timeout task %+v, want one after the poll time and the slack", i, r.timer)
		}
	}
}
