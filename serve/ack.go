package serve

import (
	"context"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"popsim/clock"
	"popsim/model"
	"popsim/proxy"
)

// AckMessage acks each entry with the handle the proxy holds for it (the
// latest renewed one when the proxy renews it, else the client's); an
// expired handle is INVALID_RECEIPT_HANDLE and never reaches the broker.
// With ack_loss the whole request is lost before the engine; with
// ack_response_loss the acks take effect and the answer is lost.
func (s *Server) AckMessage(ctx context.Context, req *v2.AckMessageRequest) (*v2.AckMessageResponse, error) {
	id := clientID(ctx)
	if id == "" {
		return &v2.AckMessageResponse{Status: errNoClientID.status()}, nil
	}
	if err := checkNames(req.GetTopic().GetName(), req.GetGroup().GetName()); err != nil {
		return &v2.AckMessageResponse{Status: err.status()}, nil
	}
	group, topic := req.GetGroup().GetName(), req.GetTopic().GetName()
	resp := &v2.AckMessageResponse{}
	var lostReq, lostResp bool
	var delay time.Duration
	if !s.l.do(func(now clock.Time) {
		delay = s.l.faults.Delay
		if lostReq = s.l.lose(s.l.faults.AckLoss); lostReq {
			s.l.AcksLost++
			return
		}
		for _, e := range req.GetEntries() {
			st := s.l.ack(now, id, group, topic, e)
			resp.Entries = append(resp.Entries, &v2.AckMessageResultEntry{MessageId: e.GetMessageId(), ReceiptHandle: e.GetReceiptHandle(), Status: st})
		}
		if lostResp = s.l.lose(s.l.faults.AckResponseLoss); lostResp {
			s.l.AckResponsesLost++
		}
	}) {
		return nil, stoppedErr
	}
	if lostReq || lostResp {
		return nil, s.lost(ctx)
	}
	resp.Status = combined(resp.Entries)
	s.delay(ctx, delay)
	return resp, nil
}

// combined is the proxy's overall status of a multi-entry answer: the one
// code all entries share, or MULTIPLE_RESULTS.
func combined(entries []*v2.AckMessageResultEntry) *v2.Status {
	if len(entries) == 0 {
		return statusOf(v2.Code_INTERNAL_SERVER_ERROR, "ack message result is empty")
	}
	code := entries[0].GetStatus().GetCode()
	for _, e := range entries[1:] {
		if e.GetStatus().GetCode() != code {
			return statusOf(v2.Code_MULTIPLE_RESULTS, "MULTIPLE_RESULTS")
		}
	}
	return statusOf(code, code.String())
}

// ack acks one entry (engine goroutine).
func (l *loop) ack(now clock.Time, clientID, group, topic string, e *v2.AckMessageEntry) *v2.Status {
	h, err := model.ParseReceiptHandle(e.GetReceiptHandle())
	if err != nil {
		return statusOf(v2.Code_INTERNAL_SERVER_ERROR, err.Error())
	}
	_, st := l.px.AckMessage(now, &proxy.AckRequest{ClientID: clientID, Group: group, Topic: topic, MessageID: e.GetMessageId(), Handle: h})
	if st.IsOK() {
		l.Acks++
	}
	return protoStatus(st)
}

// ChangeInvisibleDuration renews a lease: the broker makes a new record
// (and handle) and deletes the old one; the answer carries the new handle,
// which the client must use from then on. With change_loss the renewal
// takes effect and the answer is lost, so the client keeps the old handle.
func (s *Server) ChangeInvisibleDuration(ctx context.Context, req *v2.ChangeInvisibleDurationRequest) (*v2.ChangeInvisibleDurationResponse, error) {
	id := clientID(ctx)
	if id == "" {
		return &v2.ChangeInvisibleDurationResponse{Status: errNoClientID.status()}, nil
	}
	if err := checkNames(req.GetTopic().GetName(), req.GetGroup().GetName()); err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: err.status()}, nil
	}
	h, err := model.ParseReceiptHandle(req.GetReceiptHandle())
	if err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: statusOf(v2.Code_INTERNAL_SERVER_ERROR, err.Error())}, nil
	}
	creq := proxy.ChangeRequest{ClientID: id, Group: req.GetGroup().GetName(), Topic: req.GetTopic().GetName(),
		MessageID: req.GetMessageId(), Handle: h, InvisibleTime: fromStd(req.GetInvisibleDuration().AsDuration())}
	resp := &v2.ChangeInvisibleDurationResponse{}
	var lost bool
	var delay time.Duration
	if !s.l.do(func(now clock.Time) {
		delay = s.l.faults.Delay
		r, st := s.l.px.ChangeInvisibleDuration(now, &creq)
		resp.Status = protoStatus(st)
		if st.IsOK() {
			nh := r.Handle
			nh.CommitLogOffset = h.CommitLogOffset // the proxy's handle keeps it
			resp.ReceiptHandle = nh.String()
			s.l.Renewals++
		}
		if lost = s.l.lose(s.l.faults.ChangeLoss); lost {
			s.l.ChangesLost++
		}
	}) {
		return nil, stoppedErr
	}
	if lost {
		return nil, s.lost(ctx)
	}
	s.delay(ctx, delay)
	return resp, nil
}

// checkNames is validateTopicAndConsumerGroup.
func checkNames(topic, group string) *protoError {
	if err := validateTopicName(topic); err != nil {
		return reject(v2.Code_ILLEGAL_TOPIC, err.Error())
	}
	if err := validateGroupName(group); err != nil {
		return reject(v2.Code_ILLEGAL_CONSUMER_GROUP, err.Error())
	}
	return nil
}
