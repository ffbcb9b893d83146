package serve

import (
	"context"
	"errors"
	"strings"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	"popsim/clock"
	"popsim/pop"
	"popsim/proxy"
)

// receiveCall is one ReceiveMessage between its arrival at the engine
// goroutine and its answer; the loop owns it.
type receiveCall struct {
	req         pop.PopRequest
	maxAttempts int32
	autoRenew   bool
	clientID    string
	res         proxy.ReceiveResult
	reply       chan receiveReply // buffered: the loop never blocks on it
	gone        bool              // the caller gave up: do not re-run it
}

// receiveReply is what the handler writes to the stream.
type receiveReply struct {
	status *v2.Status
	msgs   []*v2.Message
	lost   bool
	delay  time.Duration
}

// illegalPollingTimeSince is the first client version that knows
// ILLEGAL_POLLING_TIME; older clients get BAD_REQUEST (the proxy compares
// the version strings the same way).
const illegalPollingTimeSince = "5.0.3"

// ReceiveMessage leases up to batch_size messages for invisible_duration
// and streams them: a Status, the messages, a DeliveryTimestamp, then the
// end of the stream. An empty receive waits up to its polling time (the
// call's deadline less half the client's request timeout, clamped to
// 5..20 s) and answers MESSAGE_NOT_FOUND.
func (s *Server) ReceiveMessage(req *v2.ReceiveMessageRequest, stream v2.MessagingService_ReceiveMessageServer) error {
	ctx := stream.Context()
	rc, perr := s.receiveCall(ctx, req)
	if perr != nil {
		return writeReceive(stream, perr.status(), nil)
	}
	rr := s.receiveRequest(ctx, req, rc)
	var st proxy.Status
	var later *protoError
	if !s.l.do(func(now clock.Time) {
		if rc.req, st = s.l.px.PopRequest(now, &rr); !st.IsOK() {
			return
		}
		// After the polling and invisible times, the proxy builds the filter,
		// then the route lookup finds the topic.
		if later = checkFilter(req.GetFilterExpression()); later == nil {
			later = s.checkTopic(rr.Topic)
		}
		if later == nil {
			s.l.popFor(now, rc)
		}
	}) {
		return stoppedErr
	}
	if !st.IsOK() {
		return writeReceive(stream, s.grpcStatus(ctx, st), nil)
	}
	if later != nil {
		return writeReceive(stream, later.status(), nil)
	}
	select {
	case r := <-rc.reply:
		if r.lost {
			return s.lost(ctx)
		}
		s.delay(ctx, r.delay)
		return writeReceive(stream, r.status, r.msgs)
	case <-ctx.Done():
		s.l.do(func(clock.Time) { rc.gone = true })
		return ctx.Err()
	case <-s.stopping:
		return stoppedErr
	}
}

// receiveCall checks what the proxy checks first: the client's settings
// and the names. (The proxy computes the polling time before it checks the
// names; here a bad name is found first, the only difference in order.)
func (s *Server) receiveCall(ctx context.Context, req *v2.ReceiveMessageRequest) (*receiveCall, *protoError) {
	id := clientID(ctx)
	if id == "" {
		return nil, errNoClientID
	}
	if s.sessions.await(ctx, id) == nil {
		return nil, reject(v2.Code_INTERNAL_SERVER_ERROR, "cannot find client settings for this client")
	}
	if err := validateTopicName(req.GetMessageQueue().GetTopic().GetName()); err != nil {
		return nil, reject(v2.Code_ILLEGAL_TOPIC, err.Error())
	}
	retry, err := s.registerGroup(req.GetGroup().GetName())
	if err != nil {
		return nil, err
	}
	return &receiveCall{maxAttempts: retry + 1, autoRenew: req.GetAutoRenew(), clientID: id, reply: make(chan receiveReply, 1)}, nil
}

// checkFilter is FilterAPI.build for TAG expressions (a string of nothing
// but "||" does not split), and the broker's answer to SQL92 with its
// default enablePropertyFilter = false: popsim's engine filters by tag
// only.
func checkFilter(f *v2.FilterExpression) *protoError {
	exp := f.GetExpression()
	switch {
	case f.GetType() == v2.FilterType_SQL:
		return reject(v2.Code_INTERNAL_SERVER_ERROR, "The broker does not support consumer to filter message by SQL92")
	case exp != "" && strings.ReplaceAll(exp, "||", "") == "":
		return reject(v2.Code_ILLEGAL_FILTER_EXPRESSION, "expression format is not correct: subString split error")
	}
	return nil
}

func (s *Server) receiveRequest(ctx context.Context, req *v2.ReceiveMessageRequest, rc *receiveCall) proxy.ReceiveRequest {
	rr := proxy.ReceiveRequest{
		ClientID: rc.clientID, Group: req.GetGroup().GetName(), Topic: req.GetMessageQueue().GetTopic().GetName(),
		Expression: req.GetFilterExpression().GetExpression(), BatchSize: req.GetBatchSize(),
		InvisibleTime: fromStd(req.GetInvisibleDuration().AsDuration()), AutoRenew: req.GetAutoRenew(),
		MaxAttempts: rc.maxAttempts,
	}
	// v5.1.2's ReceiveMessageRequest has no long_polling_timeout: the
	// deadline decides.
	if d, ok := ctx.Deadline(); ok {
		rr.Timeout = max(fromStd(time.Until(d)), clock.Millisecond)
	}
	if st := s.sessions.get(rc.clientID); st != nil {
		rr.RequestTimeout = fromStd(st.GetRequestTimeout().AsDuration())
	}
	return rr
}

func fromStd(d time.Duration) clock.Duration { return clock.Duration(d / time.Microsecond) }

// popFor runs a receive's pop through the proxy (engine goroutine): parked
// if the broker suspends it, else answered.
func (l *loop) popFor(now clock.Time, rc *receiveCall) {
	l.px.Pop(now, &rc.req, rc.maxAttempts, &rc.res)
	r := &rc.res.Pop
	if r.Status == pop.PopSuspended {
		l.polls[r.PollID] = rc
		l.note("park")
		return
	}
	reply := receiveReply{status: protoStatus(rc.res.Status), delay: l.faults.Delay}
	for i := range r.Messages {
		m := &r.Messages[i]
		h := m.Handle
		h.CommitLogOffset = m.Message.CommitLogOffset // the proxy's handle adds it
		reply.msgs = append(reply.msgs, messageProto(&m.Message, h.String(), l.storeHost))
		if rc.autoRenew {
			l.px.Manage(now, rc.clientID, rc.req.ConsumerGroup, m)
		}
	}
	reply.lost = len(reply.msgs) > 0 && l.lose(l.faults.ReceiveLoss)
	if reply.lost {
		l.ReceivesLost++
	}
	rc.reply <- reply
	woken := append([]pop.Wakeup(nil), r.Woken...)
	for i := range rc.res.Forwarded {
		woken = append(woken, rc.res.Forwarded[i].Put.Woken...)
		if !rc.res.Forwarded[i].NoMatch { // sent to the DLQ, not only acked
			l.Forwarded++
		}
	}
	l.wake(now, woken)
}

// dropPolls answers every parked receive with an error (restart, stop).
func (l *loop) dropPolls(why string) {
	for id, rc := range l.polls {
		delete(l.polls, id)
		if !rc.gone {
			rc.reply <- receiveReply{status: statusOf(v2.Code_INTERNAL_SERVER_ERROR, why)}
		}
	}
}

// protoStatus converts the proxy's status to the protocol's.
func protoStatus(st proxy.Status) *v2.Status {
	return statusOf(v2.Code(st.Code), st.Message)
}

// grpcStatus is protoStatus with the proxy's client-version rule for
// ILLEGAL_POLLING_TIME.
func (s *Server) grpcStatus(ctx context.Context, st proxy.Status) *v2.Status {
	if st.Code == proxy.IllegalPollingTime {
		if v := clientVersion(ctx); v == "" || illegalPollingTimeSince > v {
			return statusOf(v2.Code_BAD_REQUEST, st.Message)
		}
		return statusOf(codeIllegalPollingTime, st.Message)
	}
	return protoStatus(st)
}

// writeReceive is ReceiveMessageResponseStreamWriter: the status, the
// messages, the delivery timestamp; returning nil ends the stream cleanly.
func writeReceive(stream v2.MessagingService_ReceiveMessageServer, st *v2.Status, msgs []*v2.Message) error {
	if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}}); err != nil {
		return err
	}
	for _, m := range msgs {
		if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}); err != nil {
			return err
		}
	}
	err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_DeliveryTimestamp{DeliveryTimestamp: timestamppb.Now()}})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
