package serve

import (
	"context"
	"strconv"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"

	"popsim/clock"
	"popsim/model"
)

// SendMessage stores the messages on one queue the server picks, as the
// proxy does: the request names none, and the proxy's write selector takes
// the topic's queues in turn. A retried send carries the same message id
// and is stored again: the store does not deduplicate (with send_loss, a
// lost response makes exactly such a duplicate).
func (s *Server) SendMessage(ctx context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	if clientID(ctx) == "" {
		return &v2.SendMessageResponse{Status: errNoClientID.status()}, nil
	}
	msgs, perr := s.checkSend(ctx, req)
	if perr != nil {
		return &v2.SendMessageResponse{Status: perr.status()}, nil
	}
	var resp *v2.SendMessageResponse
	var lost bool
	var delay time.Duration
	if !s.l.do(func(now clock.Time) {
		resp, lost, delay = s.l.send(now, msgs), s.l.lose(s.l.faults.SendLoss), s.l.faults.Delay
		if lost {
			s.l.SendsLost++
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

// checkSend applies the proxy's checks in its order: a message at all, the
// topic, each message's fields, one topic for all, then the topic's
// message type (every popsim topic is NORMAL).
func (s *Server) checkSend(ctx context.Context, req *v2.SendMessageRequest) ([]model.Message, *protoError) {
	list := req.GetMessages()
	if len(list) == 0 {
		return nil, reject(v2.Code_MESSAGE_CORRUPTED, "no message to send")
	}
	topic := list[0].GetTopic()
	if err := validateTopicName(topic.GetName()); err != nil {
		return nil, reject(v2.Code_ILLEGAL_TOPIC, err.Error())
	}
	out := make([]model.Message, 0, len(list))
	for _, m := range list {
		if !proto.Equal(m.GetTopic(), topic) {
			return nil, reject(v2.Code_MESSAGE_CORRUPTED, "topic in message is not same")
		}
		msg, err := buildMessage(m, remoteAddr(ctx))
		if err != nil {
			return nil, err
		}
		out = append(out, msg)
	}
	if t := messageType(list[0]); t != v2.MessageType_NORMAL {
		return nil, reject(v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
			"TopicMessageType validate failed, the expected type is NORMAL, but actual type is "+t.String()+" (popsim serve has NORMAL topics only)")
	}
	if s.topic(topic.GetName()) == nil {
		return nil, reject(v2.Code_TOPIC_NOT_FOUND, "topic "+topic.GetName()+" does not exist")
	}
	return out, nil
}

// messageType is TopicMessageType.parseFromMessageProperty on what the
// proxy would have written: transaction, then delay, then FIFO.
func messageType(m *v2.Message) v2.MessageType {
	sp := m.GetSystemProperties()
	switch {
	case sp.GetMessageType() == v2.MessageType_TRANSACTION:
		return v2.MessageType_TRANSACTION
	case sp.GetDeliveryTimestamp() != nil:
		return v2.MessageType_DELAY
	case sp.GetMessageGroup() != "":
		return v2.MessageType_FIFO
	}
	return v2.MessageType_NORMAL
}

// send puts the messages on the topic's next queue (engine goroutine).
func (l *loop) send(now clock.Time, msgs []model.Message) *v2.SendMessageResponse {
	topic := msgs[0].Topic
	queues := l.topicQueues(topic)
	qid := int32(l.rr[topic] % uint32(queues))
	l.rr[topic]++
	resp := &v2.SendMessageResponse{}
	codes := map[v2.Code]bool{}
	for i := range msgs {
		m := &msgs[i]
		m.QueueID = qid
		r := l.b.Put(now, m)
		l.PutFailures += len(r.Failures)
		l.wake(now, r.Woken)
		e := &v2.SendResultEntry{Status: statusOK, MessageId: m.UniqKey, Offset: r.Offset}
		if r.Code != model.Success {
			e = &v2.SendResultEntry{Status: statusOf(v2.Code_INTERNAL_SERVER_ERROR, "send message failed: "+r.Code.String()+" "+r.Remark)}
		}
		if r.Code == model.Success {
			l.Sent++
		}
		codes[e.Status.Code] = true
		resp.Entries = append(resp.Entries, e)
	}
	switch {
	case len(codes) > 1:
		resp.Status = statusOf(v2.Code_MULTIPLE_RESULTS, "MULTIPLE_RESULTS")
	default:
		resp.Status = resp.Entries[0].Status
	}
	return resp
}

func (l *loop) topicQueues(name string) int32 {
	for _, t := range l.cfg.Topics {
		if t.Name == name {
			return t.Queues
		}
	}
	panic("serve: send to a topic the server does not have: " + strconv.Quote(name))
}
