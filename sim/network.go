package sim

import (
	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// callKind is a client request type; the order matches lossKinds.
type callKind uint8

const (
	callPop callKind = iota
	callAck
	callChange
	callPull
)

// changePurpose says why a changeInvisibleTime was sent, which decides
// what the client does with the response.
type changePurpose uint8

const (
	changeNack       changePurpose = iota // RECONSUME_LATER backoff: fire and forget
	changeRenew                           // simple consumer auto-renew: adopt the new handle
	changeFault                           // injected edge renewal: adopt the new handle
	changeFaultStale                      // injected late renewal with an old handle: ignore
)

// call is one request on the network and, later, its response.
type call struct {
	kind     callKind
	c        *consumer
	epoch    uint32
	done     bool // the client got the response or gave up
	reported bool // a loss was already traced
	pollID   uint64
	// suspended: the broker parked this pop at least once (traced once)
	suspended bool

	pop *popCall // pops and receives

	h           *held
	handle      string // the handle the ack or change carries
	why         changePurpose
	edge        int   // renewal edge for changeFault
	invisibleMs int64 // changeInvisibleTime's requested time
	chCode      model.ResponseCode
	newHandle   model.ReceiptHandle // a successful renewal's handle

	timer    *event // the client's timeout, cancelled by the response
	timerSeq uint64

	// pull
	pq      *pullQueue
	gen     uint32
	offset  int64
	pullRes pop.PullResult
}

// popCall is a pop request and its result.
type popCall struct {
	req pop.PopRequest
	res pop.PopResult
}

// popCallBox allocates a pop call and its popCall together.
type popCallBox struct {
	cl call
	pc popCall
}

// newCall returns a fresh call; a pop call comes with its popCall. Ack
// calls are recycled: nothing refers to one once the broker has served it
// (see atBroker).
func (s *sim) newCall(k callKind, c *consumer) *call {
	switch n := len(s.freeAcks); {
	case k == callAck && n > 0:
		cl := s.freeAcks[n-1]
		s.freeAcks[n-1] = nil
		s.freeAcks = s.freeAcks[:n-1]
		*cl = call{kind: k, c: c, epoch: c.epoch}
		return cl
	case k == callPop:
		b := &popCallBox{cl: call{kind: k, c: c, epoch: c.epoch}}
		b.cl.pop = &b.pc
		return &b.cl
	}
	return &call{kind: k, c: c, epoch: c.epoch}
}

// send puts a request on the wire: it reaches the broker after a request
// latency; with timeout > 0 the client gives up after it.
func (s *sim) send(cl *call, timeout clock.Duration) {
	s.q.after(s.reqLat.Sample(s.netRng), evNetRequest, cl.c.idx, cl.epoch, cl)
	if timeout > 0 {
		cl.timer = s.q.after(timeout, evTimeout, cl.c.idx, cl.epoch, cl)
		cl.timerSeq = cl.timer.seq
	}
}

// reply sends the response back after a response latency.
func (s *sim) reply(cl *call) {
	s.q.after(s.respLat.Sample(s.netRng), evNetResponse, cl.c.idx, cl.epoch, cl)
}

// lost decides whether a request (response=false) or a response of kind k
// is lost. Faults are off in the liveness phase.
func (s *sim) lost(k callKind, response bool) bool {
	st := &s.faults.loss[k][0]
	if response {
		st = &s.faults.loss[k][1]
	}
	if s.live || !st.on || st.ppm == 0 || !chance(s.faults.rng[famLoss], st.ppm) {
		return false
	}
	s.cov.hit(st.name)
	return true
}

// atBroker is a request arriving at the broker. A request from a client
// incarnation that has crashed meanwhile arrives on a closed connection and
// is dropped: a broker does not serve (or park) a dead channel.
func (s *sim) atBroker(cl *call) {
	s.serve(cl)
	if cl.kind == callAck {
		// An ack has no response and no timer, and its sender kept no
		// reference: after this event nothing refers to the call.
		s.freeAcks = append(s.freeAcks, cl)
	}
}

func (s *sim) serve(cl *call) {
	if cl.epoch != cl.c.epoch {
		s.traceRequestLost(cl, "client-gone")
		return
	}
	if s.lost(cl.kind, false) {
		s.traceRequestLost(cl, "request")
		return
	}
	switch cl.kind {
	case callPop:
		s.brokerPop(cl, &cl.pop.req)
	case callAck:
		s.brokerAck(cl)
	case callChange:
		s.brokerChange(cl)
	case callPull:
		s.brokerPull(cl)
	}
}

func (s *sim) traceRequestLost(cl *call, why string) {
	cl.reported = true
	c := cl.c
	switch cl.kind {
	case callPop:
		s.emit(model.Event{Kind: model.EvPopLost, Client: c.idx, Topic: c.g.topic, Queue: -1, Offset: -1, Detail: why})
	case callAck:
		h := cl.h
		s.emit(model.Event{Kind: model.EvAckLost, Client: c.idx, Msg: h.key, Topic: h.topic, Queue: h.queue, Offset: h.offset, Handle: cl.handle, Detail: why})
	case callChange:
		h := cl.h
		s.emit(model.Event{Kind: model.EvChangeLost, Client: c.idx, Msg: h.key, Topic: h.topic, Queue: h.queue, Offset: h.offset, Handle: cl.handle, Detail: why})
	}
}

// atClient is a response arriving at its client.
func (s *sim) atClient(e *event) {
	cl := e.p.(*call)
	c := cl.c
	if cl.epoch != c.epoch || !c.alive {
		if cl.kind == callPop && !cl.reported {
			s.emit(model.Event{Kind: model.EvPopLost, Client: c.idx, Topic: c.g.topic, Queue: -1, Offset: -1, N: int64(len(cl.pop.res.Messages)), Detail: "client-gone"})
		}
		return
	}
	if s.q.now() < c.pauseUntil {
		s.q.at(c.pauseUntil, e.kind, e.who, e.epoch, e.p)
		return
	}
	if cl.done {
		if cl.kind == callPop {
			s.cov.hit("late-response")
			s.emit(model.Event{Kind: model.EvPopLost, Client: c.idx, Topic: c.g.topic, Queue: -1, Offset: -1, N: int64(len(cl.pop.res.Messages)), Detail: "late"})
		}
		return
	}
	cl.done = true
	s.q.cancel(cl.timer, cl.timerSeq)
	switch cl.kind {
	case callPop:
		s.popResponse(c, cl)
	case callChange:
		s.changeResponse(c, cl)
	case callPull:
		s.pullResponse(c, cl)
	}
}

// timeout is the client giving up on a request it has no answer for.
func (s *sim) timeout(c *consumer, cl *call) {
	if cl.done {
		return
	}
	cl.done = true
	s.cov.hit("client-timeout")
	switch cl.kind {
	case callPop:
		if !cl.reported {
			cl.reported = true
			s.emit(model.Event{Kind: model.EvPopLost, Client: c.idx, Topic: c.g.topic, Queue: -1, Offset: -1, Detail: "timeout"})
		}
		if c.popOut == cl {
			c.popOut = nil
		}
		s.schedulePoll(c, pullTimeDelayWhenException)
	case callChange:
		s.renewTimeout(c, cl)
	case callPull:
		cl.pq.pulling = false
		s.schedulePull(cl.pq, pullTimeDelayWhenException)
	}
}
