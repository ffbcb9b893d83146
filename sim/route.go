package sim

import (
	"strconv"

	"popsim/model"
)

// route is the cluster's topic route (broker.count brokers, RocketMQ's
// TopicRouteData): every broker holds each configured topic with its
// topics[].queues queues, as a topic created on a cluster is created on
// each of its brokers. The simulator, its clients and the trace number a
// configured topic's queues broker by broker: broker b's local queue q is
// queue b×queues+q of the topic (the producer's round robin, the Pull
// baseline's rebalance and the checker see one topic of count×queues
// queues). Topics the brokers make themselves (retry and DLQ topics) are
// numbered broker-interleaved instead, local queue q of broker b being
// q×count+b, since their queue counts are the engine's. With one broker
// every number is the broker's own.
type route struct {
	n     int32            // brokers
	names []string         // BrokerName of each (receipt handles carry it)
	per   map[string]int32 // configured topics: queues on each broker
}

func newRoute(n int32, topics []TopicSpec) *route {
	r := &route{n: max(n, 1), per: map[string]int32{}}
	for b := range r.n {
		r.names = append(r.names, brokerName(b))
	}
	for _, t := range topics {
		r.per[t.Name] = t.Queues
	}
	return r
}

// brokerName is broker b's name: broker-a, broker-b, ... broker-z,
// broker-aa, ... (RocketMQ's example clusters name their masters so).
func brokerName(b int32) string {
	var s []byte
	for n := b + 1; n > 0; n = (n - 1) / 26 {
		s = append([]byte{byte('a' + (n-1)%26)}, s...)
	}
	return "broker-" + string(s)
}

// multi reports several brokers.
func (r *route) multi() bool { return r.n > 1 }

// queues is a configured topic's queue count in the whole cluster.
func (r *route) queues(topic string) int32 { return r.per[topic] * r.n }

// global is the trace's number of broker b's queue q of topic (q < 0 is
// kept: no queue, or every queue).
func (r *route) global(b int32, topic string, q int32) int32 {
	if r.n == 1 || q < 0 {
		return q
	}
	if per, ok := r.per[topic]; ok {
		return b*per + q
	}
	return q*r.n + b
}

// split is the broker and local queue of a configured topic's queue.
func (r *route) split(topic string, q int32) (b, local int32) {
	if r.n == 1 {
		return 0, q
	}
	per := r.per[topic]
	return q / per, q % per
}

// brokerOf is the broker a receipt handle names (broker 0 for a name the
// cluster does not have: no such handle is ever made).
func (r *route) brokerOf(name string) int32 {
	if r.n == 1 {
		return 0
	}
	for b, n := range r.names {
		if n == name {
			return int32(b)
		}
	}
	return 0
}

// traced rewrites an event a broker's adapter traces into the cluster's
// queue numbers.
func (r *route) traced(b int32, e *model.Event) {
	if r.n > 1 && e.Topic != "" {
		e.Queue = r.global(b, e.Topic, e.Queue)
	}
}

// String is the route for messages: "3 brokers (broker-a..broker-c)".
func (r *route) String() string {
	if r.n == 1 {
		return "1 broker (" + r.names[0] + ")"
	}
	return strconv.Itoa(int(r.n)) + " brokers (" + r.names[0] + ".." + r.names[r.n-1] + ")"
}
