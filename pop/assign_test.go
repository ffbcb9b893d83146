package pop

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"popsim/clock"
	pfilter "popsim/filter"
	"popsim/model"
)

// queues builds the expected assignment from "broker/queue" words.
func queues(words ...string) []MessageQueue {
	out := []MessageQueue{}
	for _, w := range words {
		var b string
		var q int32
		i := strings.LastIndexByte(w, '/')
		b = w[:i]
		if _, err := fmt.Sscanf(w[i+1:], "%d", &q); err != nil {
			panic(w)
		}
		out = append(out, MessageQueue{Topic: "t", BrokerName: b, QueueID: q})
	}
	return out
}

func clients(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("c%d", i)
	}
	return out
}

// TestAssign covers each branch of doLoadBalance and allocate4Pop, with
// the boundaries popShareQueueNum = n-1 (all queues) and n-2 (shares),
// n == q and n > q.
func TestAssign(t *testing.T) {
	one := func(n int32) []RouteBroker { return []RouteBroker{{BrokerName: "a", ReadQueueNums: n}} }
	two := []RouteBroker{{BrokerName: "b", ReadQueueNums: 2}, {BrokerName: "a", ReadQueueNums: 2}}
	pop := func(route []RouteBroker, cids []string, client string, share int32) AssignInput {
		return AssignInput{Topic: "t", Route: route, ClientIDs: cids, ClientID: client, Mode: RequestModePop, PopShareQueueNum: share,
			Strategy: StrategyAveragely, MessageModel: Clustering, ServerLoadBalancerEnable: true}
	}
	with := func(in AssignInput, f func(*AssignInput)) AssignInput { f(&in); return in }
	null := []MessageQueue(nil)
	cases := []struct {
		name string
		in   AssignInput
		want []MessageQueue // nil: no assignment (null)
	}{
		// popShareQueueNum <= 0 or >= n-1: one all-queue MessageQueue per broker.
		{"share 0: all", pop(one(8), clients(4), "c1", 0), queues("a/-1")},
		{"share -1: all", pop(one(8), clients(4), "c1", -1), queues("a/-1")},
		{"share n-1: all", pop(one(8), clients(4), "c1", 3), queues("a/-1")},
		{"share > n-1: all", pop(one(8), clients(4), "c1", 9), queues("a/-1")},
		{"share 0, two brokers: one each", pop(two, clients(4), "c0", 0), queues("a/-1", "b/-1")},
		{"share 1, n=2 (n-1): all", pop(one(8), clients(2), "c0", 1), queues("a/-1")},
		{"share 1, n=1: all", pop(one(8), clients(1), "c0", 1), queues("a/-1")},
		{"share 1, no clients: all", pop(one(8), []string{}, "c0", 1), queues("a/-1")},
		{"share 0, client not in the list: all", pop(one(8), clients(4), "x", 0), queues("a/-1")},
		{"share 0, empty client id: all", pop(one(8), clients(4), "", 0), queues("a/-1")},
		{"share 0, no readable queue: empty", pop(one(0), clients(4), "c0", 0), queues()},
		// 1..n-2 with n <= q: the own share plus the next clients' (AVG: 0,1 | 2,3 | 4,5 | 6,7).
		{"share 1: own and next", pop(one(8), clients(4), "c0", 1), queues("a/0", "a/1", "a/2", "a/3")},
		{"share 1, last client wraps", pop(one(8), clients(4), "c3", 1), queues("a/0", "a/1", "a/6", "a/7")},
		{"share n-2: own and n-2 next", pop(one(8), clients(4), "c3", 2), queues("a/0", "a/1", "a/2", "a/3", "a/6", "a/7")},
		{"share 1, n == q", pop(one(4), clients(4), "c3", 1), queues("a/0", "a/3")},
		{"share 1, two brokers sorted by name", pop(two, clients(4), "c1", 1), queues("a/1", "b/0")},
		{"share 1, uneven AVG (q=5, n=3)", pop(one(5), clients(3), "c2", 1), queues("a/0", "a/1", "a/4")},
		{"share 1, AVG_BY_CIRCLE", with(pop(one(5), clients(3), "c1", 1), func(in *AssignInput) { in.Strategy = StrategyAveragelyByCircle }), queues("a/1", "a/2", "a/4")},
		{"share 1, client not in the list: empty", pop(one(8), clients(4), "x", 1), queues()},
		{"share 1, empty client id: null", pop(one(8), clients(4), "", 1), null},
		// 1..n-2 with n > q: the queue at index % q.
		{"n > q: index", pop(one(3), clients(4), "c2", 1), queues("a/2")},
		{"n > q: index mod q", pop(one(3), clients(4), "c3", 1), queues("a/0")},
		{"n > q, share n-2", pop(one(3), clients(5), "c4", 3), queues("a/1")},
		{"n > q, client not in the list: empty", pop(one(3), clients(4), "x", 1), queues()},
		{"n > q, blank client id: null", pop(one(3), clients(4), "  ", 1), null},
		{"n > q, no readable queue: null", pop(one(0), clients(4), "c0", 1), null},
		// PULL: the strategy alone (AVG, q=8, n=3: 0-2 | 3-5 | 6,7).
		{"pull: AVG", with(pop(one(8), clients(3), "c1", 0), func(in *AssignInput) { in.Mode = RequestModePull }), queues("a/3", "a/4", "a/5")},
		{"pull: more clients than queues", with(pop(one(2), clients(3), "c2", 0), func(in *AssignInput) { in.Mode = RequestModePull }), queues()},
		{"pull: no readable queue: null", with(pop(one(0), clients(3), "c0", 0), func(in *AssignInput) { in.Mode = RequestModePull }), null},
		{"pull: no clients: null", with(pop(one(8), []string{}, "c0", 0), func(in *AssignInput) { in.Mode = RequestModePull }), null},
		// What comes before the allocation.
		{"no route: null", pop(nil, clients(4), "c0", 0), null},
		{"no ConsumerGroupInfo: null", pop(one(8), nil, "c0", 0), null},
		{"unknown strategy: null", with(pop(one(8), clients(4), "c0", 0), func(in *AssignInput) { in.Strategy = "CONSISTENT_HASH" }), null},
		{"serverLoadBalancerEnable false: every queue", with(pop(two, clients(4), "c0", 1), func(in *AssignInput) { in.ServerLoadBalancerEnable = false }), queues("a/0", "a/1", "b/0", "b/1")},
		{"broadcasting: every queue", with(pop(one(3), nil, "c0", 1), func(in *AssignInput) { in.MessageModel = Broadcasting; in.Strategy = "x" }), queues("a/0", "a/1", "a/2")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cids := slices.Clone(tc.in.ClientIDs)
			got, why := Assign(&tc.in)
			if tc.want == nil {
				if why == "" {
					t.Fatalf("got %v: want no assignment (null)", got)
				}
				return
			}
			if why != "" {
				t.Fatalf("null (%s): want %v", why, tc.want)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if !slices.Equal(tc.in.ClientIDs, cids) {
				t.Fatalf("Assign reordered its input: %v", tc.in.ClientIDs)
			}
		})
	}
}

// TestAssignCoversQueues: with popShareQueueNum in 1..n-2 every queue
// is popped by popShareQueueNum+1 clients when n divides q, and by at
// least one client in any case, for every n and q up to 12.
func TestAssignCoversQueues(t *testing.T) {
	for q := int32(1); q <= 12; q++ {
		for n := 3; n <= 12; n++ {
			for share := int32(1); share <= int32(n-2); share++ {
				count := make([]int, q)
				for _, c := range clients(n) {
					in := AssignInput{Topic: "t", Route: []RouteBroker{{"a", q}}, ClientIDs: clients(n), ClientID: c, Mode: RequestModePop,
						PopShareQueueNum: share, Strategy: StrategyAveragely, MessageModel: Clustering, ServerLoadBalancerEnable: true}
					got, why := Assign(&in)
					if why != "" || len(got) == 0 {
						t.Fatalf("q=%d n=%d share=%d %s: %v (%s)", q, n, share, c, got, why)
					}
					for _, mq := range got {
						count[mq.QueueID]++
					}
				}
				for i, k := range count {
					if k == 0 || int(q)%n == 0 && k != int(share)+1 {
						t.Fatalf("q=%d n=%d share=%d: queue %d popped by %d clients", q, n, share, i, k)
					}
				}
			}
		}
	}
}

// TestAssignJavaOrder: clients and brokers sort as Java's String.compareTo
// does (UTF-16 code units), which differs from Go's byte order above the
// BMP.
func TestAssignJavaOrder(t *testing.T) {
	if pfilter.CompareUTF16("\U0001F600", "\uFF5E") >= 0 {
		t.Fatal("a surrogate pair must sort before U+FF5E, as in Java")
	}
	if pfilter.CompareUTF16("Broker-b", "broker-a") >= 0 || pfilter.CompareUTF16("c10", "c2") >= 0 {
		t.Fatal("ASCII order is byte order")
	}
	in := AssignInput{Topic: "t", Route: []RouteBroker{{"a", 3}}, ClientIDs: []string{"c2", "c10", "c1"}, ClientID: "c2", Mode: RequestModePop,
		PopShareQueueNum: 1, Strategy: StrategyAveragely, MessageModel: Clustering, ServerLoadBalancerEnable: true}
	// Sorted c1, c10, c2: c2 is the last, owns queue 2 and shares c1's queue 0.
	if got, _ := Assign(&in); !slices.Equal(got, queues("a/0", "a/2")) {
		t.Fatalf("got %v", got)
	}
}

// TestQueryAssignmentModes: the stored mode, else the defaults; retry
// topics PULL; the mode survives a restart.
func TestQueryAssignmentModes(t *testing.T) {
	b := testBroker(t, DefaultConfig(), 4)
	req := QueryAssignmentRequest{Topic: "t", ConsumerGroup: "g", ClientID: "c0", ClientIDs: clients(4), StrategyName: StrategyAveragely, MessageModel: Clustering}
	if r := b.QueryAssignment(&req); r.Mode.Mode != RequestModePull || len(r.Assignments) != 1 || r.Assignments[0].Queue.QueueID != 0 {
		t.Fatalf("default: %+v, want PULL and queue 0", r)
	}
	if r := b.SetMessageRequestMode(&SetMessageRequestModeRequest{Topic: "t", ConsumerGroup: "g", Mode: RequestModePop, PopShareQueueNum: 1}); r.Code != model.Success {
		t.Fatalf("set: %+v", r)
	}
	b.Restart(clock.Epoch)
	r := b.QueryAssignment(&req)
	if r.Mode.Mode != RequestModePop || !slices.Equal(assignedQueues(r), queues("broker-a/0", "broker-a/1")) || r.Assignments[0].Mode != RequestModePop {
		t.Fatalf("after set and restart: %+v, want POP queues 0 and 1", r)
	}
	if st := b.State(); len(st.RequestModes) != 1 || st.RequestModes[0].PopShareQueueNum != 1 {
		t.Fatalf("state: %+v", st.RequestModes)
	}
	retry := req
	retry.Topic = model.RetryGroupTopicPrefix + "g"
	if m := b.EffectiveRequestMode(retry.Topic, "g"); m.Mode != RequestModePull {
		t.Fatalf("retry topic: %+v, want PULL", m)
	}
}

func assignedQueues(r QueryAssignmentResult) []MessageQueue {
	out := []MessageQueue{}
	for _, a := range r.Assignments {
		q := a.Queue
		q.Topic = "t"
		out = append(out, q)
	}
	return out
}

// cmdSetMode is SET_MESSAGE_REQUEST_MODE.
func cmdSetMode(e *scriptEnv, a *cmdArgs) error {
	req := SetMessageRequestModeRequest{Topic: a.arg(0, "topic"), ConsumerGroup: a.arg(1, "group"),
		Mode: MessageRequestMode(a.str("mode", "")), PopShareQueueNum: int32(a.int("share", 0))}
	if err := a.done(); err != nil {
		return err
	}
	r := e.b.SetMessageRequestMode(&req)
	if r.Code != model.Success {
		e.printf("code=%v remark=%q", r.Code, r.Remark)
		return nil
	}
	e.printf("code=%v", r.Code)
	return nil
}

// cmdAssign asks QUERY_ASSIGNMENT for each client of the group (or for
// client=C only) and prints the answers, one line per client.
// clients=- means the broker has no ConsumerGroupInfo; route=b:n,... asks
// with a route of several brokers (QueryAssignmentRoute).
func cmdAssign(e *scriptEnv, a *cmdArgs) error {
	req := QueryAssignmentRequest{Topic: a.arg(0, "topic"), ConsumerGroup: a.arg(1, "group"),
		StrategyName: a.str("strategy", StrategyAveragely), MessageModel: MessageModel(a.str("model", string(Clustering)))}
	list, only := a.str("clients", "-"), a.str("client", "")
	route, hasRoute := e.b.Route(req.Topic), a.has("route")
	if hasRoute {
		route = parseRoute(a, a.str("route", ""))
	}
	if err := a.done(); err != nil {
		return err
	}
	if list != "-" {
		req.ClientIDs = []string{}
		if list != "" {
			req.ClientIDs = strings.Split(list, ",")
		}
	}
	ask := req.ClientIDs
	if only != "" || len(ask) == 0 {
		ask = []string{only}
	}
	for i, c := range ask {
		req.ClientID = c
		r := e.b.QueryAssignmentRoute(&req, route)
		if i == 0 {
			e.printf("code=%v mode=%s popShareQueueNum=%d%s", r.Code, r.Mode.Mode, r.Mode.PopShareQueueNum, remark(r.Remark))
		}
		if r.Code == model.Success {
			e.printf("%q: %s", c, formatAssignment(&r))
		}
	}
	return nil
}

func remark(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf(" remark=%q", s)
}

func parseRoute(a *cmdArgs, s string) []RouteBroker {
	var out []RouteBroker
	for _, part := range strings.Split(s, ",") {
		var rb RouteBroker
		name, n, ok := strings.Cut(part, ":")
		if _, err := fmt.Sscanf(n, "%d", &rb.ReadQueueNums); !ok || err != nil {
			a.fail("route=%q: want broker:queues,...", s)
			return nil
		}
		rb.BrokerName = name
		out = append(out, rb)
	}
	return out
}

func formatAssignment(r *QueryAssignmentResult) string {
	if r.Null {
		return "null (" + r.NullWhy + ")"
	}
	words := make([]string, len(r.Assignments))
	for i, as := range r.Assignments {
		words[i] = fmt.Sprintf("%s/%d", as.Queue.BrokerName, as.Queue.QueueID)
	}
	return "[" + strings.Join(words, " ") + "]"
}
