package serve

import (
	"crypto/md5"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
	"unicode"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"popsim/model"
)

// Message properties the proxy reads or writes beyond model's typed ones
// (MessageConst).
const (
	propProducerGroup = "PGROUP"
	propBornHost      = "__BORNHOST"
	propTraceContext  = "TRACE_CONTEXT"
	propReconsumeTime = "RECONSUME_TIME"
	keySeparator      = " " // MessageConst.KEY_SEPARATOR
)

// systemProperties is MessageConst.STRING_HASH_SET: names a user property
// may not use, and the properties a received message does not show as
// user properties.
var systemProperties = map[string]bool{
	"TRACE_ON": true, "MSG_REGION": true, "KEYS": true, "TAGS": true, "WAIT": true, "DELAY": true,
	"RETRY_TOPIC": true, "REAL_TOPIC": true, "REAL_QID": true, "TRAN_MSG": true, "PGROUP": true,
	"MIN_OFFSET": true, "MAX_OFFSET": true, "BUYER_ID": true, "ORIGIN_MESSAGE_ID": true,
	"TRANSFER_FLAG": true, "CORRECTION_FLAG": true, "MQ2_FLAG": true, "RECONSUME_TIME": true,
	"UNIQ_KEY": true, "MAX_RECONSUME_TIMES": true, "CONSUME_START_TIME": true, "POP_CK": true,
	"POP_CK_OFFSET": true, "1ST_POP_TIME": true, "TRAN_PREPARED_QUEUE_OFFSET": true, "DUP_INFO": true,
	"EXTEND_UNIQ_INFO": true, "INSTANCE_ID": true, "CORRELATION_ID": true, "REPLY_TO_CLIENT": true,
	"TTL": true, "ARRIVE_TIME": true, "PUSH_REPLY_TIME": true, "CLUSTER": true, "MSG_TYPE": true,
	"INNER_MULTI_QUEUE_OFFSET": true, "TIMER_DELAY_MS": true, "TIMER_DELAY_SEC": true,
	"TIMER_DELIVER_MS": true, "TIMER_ENQUEUE_MS": true, "TIMER_DEQUEUE_MS": true, "TIMER_ROLL_TIMES": true,
	"TIMER_OUT_MS": true, "TIMER_DEL_UNIQKEY": true, "TIMER_DELAY_LEVEL": true, "__BORNHOST": true,
	"BORN_TIMESTAMP": true, "DLQ_ORIGIN_TOPIC": true, "DLQ_ORIGIN_MESSAGE_ID": true, "__CRC32#": true,
}

// The proxy's limits on what a producer sends (ProxyConfig defaults).
const (
	maxBodySize         = 4 * 1024 * 1024 // maxMessageSize
	maxUserPropertyNum  = 128             // userPropertyMaxNum
	maxUserPropertySize = 16 * 1024       // maxUserPropertySize
)

// Codes the proxy answers that are newer than the v5.1.2 protocol package
// (definition.proto's numbers; a client shows them as numbers).
const (
	codeIllegalPollingTime v2.Code = 40018 // ILLEGAL_POLLING_TIME
	codeMessageBodyEmpty   v2.Code = 41302 // MESSAGE_BODY_EMPTY
)

func statusOf(code v2.Code, msg string) *v2.Status {
	if msg == "" {
		msg = code.String()
	}
	return &v2.Status{Code: code, Message: msg}
}

var statusOK = statusOf(v2.Code_OK, "OK")

// protoError is a request the proxy rejects, with its code.
type protoError struct {
	code v2.Code
	msg  string
}

func (e *protoError) Error() string { return e.code.String() + ": " + e.msg }

func (e *protoError) status() *v2.Status { return statusOf(e.code, e.msg) }

func reject(code v2.Code, msg string) *protoError { return &protoError{code, msg} }

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// buildMessage converts a sent message into the engine's form, with the
// proxy's checks in its order (SendMessageActivity.buildMessage): body
// size, user properties, tag, keys, their total size, message id.
func buildMessage(m *v2.Message, remoteAddr string) (model.Message, *protoError) {
	sp := m.GetSystemProperties()
	if len(m.GetBody()) == 0 {
		return model.Message{}, reject(codeMessageBodyEmpty, "message body cannot be empty")
	}
	if len(m.GetBody()) > maxBodySize {
		return model.Message{}, reject(v2.Code_MESSAGE_BODY_TOO_LARGE, "message body cannot exceed the max "+strconv.Itoa(maxBodySize))
	}
	out := model.Message{Topic: m.GetTopic().GetName(), Body: append([]byte(nil), m.GetBody()...)}
	props := m.GetUserProperties()
	if len(props) > maxUserPropertyNum {
		return model.Message{}, reject(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, "too many user properties, max is "+strconv.Itoa(maxUserPropertyNum))
	}
	size := 0
	for k, v := range props {
		switch {
		case systemProperties[k]:
			return model.Message{}, reject(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "property is used by system: "+k)
		case hasControl(k):
			return model.Message{}, reject(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the key of property cannot contain control character")
		case hasControl(v):
			return model.Message{}, reject(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the value of property cannot contain control character")
		}
		size += len(k) + len(v)
		_ = out.SetProperty(k, v)
	}
	tag := sp.GetTag()
	if tag != "" {
		switch {
		case isBlank(tag):
			return model.Message{}, reject(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot be the char sequence of whitespace")
		case strings.Contains(tag, "|"):
			return model.Message{}, reject(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain '|'")
		case hasControl(tag):
			return model.Message{}, reject(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain control character")
		}
	}
	out.Tags = tag
	size += len(tag)
	for _, k := range sp.GetKeys() {
		if k != "" && isBlank(k) {
			return model.Message{}, reject(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot be the char sequence of whitespace")
		}
		if hasControl(k) {
			return model.Message{}, reject(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot contain control character")
		}
		size += len(k)
	}
	out.Keys = strings.Join(sp.GetKeys(), keySeparator)
	if size > maxUserPropertySize {
		return model.Message{}, reject(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, "the total size of user property is too large, max is "+strconv.Itoa(maxUserPropertySize))
	}
	if isBlank(sp.GetMessageId()) {
		return model.Message{}, reject(v2.Code_ILLEGAL_MESSAGE_ID, "message id cannot be empty")
	}
	out.UniqKey = sp.GetMessageId()
	_ = out.SetProperty(propReconsumeTime, strconv.Itoa(int(sp.GetDeliveryAttempt())))
	_ = out.SetProperty(propProducerGroup, out.Topic) // the topic is the gRPC producer group
	if tc := sp.GetTraceContext(); tc != "" {
		_ = out.SetProperty(propTraceContext, tc)
	}
	bornHost := sp.GetBornHost()
	if isBlank(bornHost) {
		bornHost = remoteAddr
	}
	if !isBlank(bornHost) {
		_ = out.SetProperty(propBornHost, bornHost)
	}
	if ts := sp.GetBornTimestamp(); ts.IsValid() {
		out.BornTimestamp = ts.AsTime().UnixMilli()
	}
	return out, nil
}

// messageProto is GrpcConverter.buildMessage: a received message as the
// client sees it, with its receipt handle.
func messageProto(m *model.Message, handle string, storeHost string) *v2.Message {
	sum := md5.Sum(m.Body)
	sp := &v2.SystemProperties{
		Keys:            splitKeys(m.Keys),
		MessageId:       m.UniqKey,
		BodyDigest:      &v2.Digest{Type: v2.DigestType_MD5, Checksum: strings.ToUpper(hex.EncodeToString(sum[:]))},
		BodyEncoding:    v2.Encoding_IDENTITY,
		MessageType:     v2.MessageType_NORMAL,
		BornTimestamp:   timestamppb.New(msTime(m.BornTimestamp)),
		StoreTimestamp:  timestamppb.New(msTime(m.StoreTimestamp)),
		StoreHost:       storeHost,
		QueueId:         m.QueueID,
		QueueOffset:     proto.Int64(m.QueueOffset),
		DeliveryAttempt: proto.Int32(m.ReconsumeTimes + 1), // the proxy: reconsumeTimes + 1
	}
	if m.Tags != "" {
		sp.Tag = &m.Tags
	}
	if h, ok := m.Property(propBornHost); ok && !isBlank(h) {
		sp.BornHost = h
	}
	if handle != "" {
		sp.ReceiptHandle = &handle
	}
	if tc, ok := m.Property(propTraceContext); ok {
		sp.TraceContext = &tc
	}
	user := map[string]string{}
	for _, p := range m.Properties {
		if !systemProperties[p.Key] {
			user[p.Key] = p.Value
		}
	}
	return &v2.Message{
		Topic:            &v2.Resource{Name: m.Topic},
		UserProperties:   user,
		SystemProperties: sp,
		Body:             append([]byte(nil), m.Body...),
	}
}

func splitKeys(keys string) []string {
	if keys == "" {
		return nil
	}
	return strings.Split(keys, keySeparator)
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms) }
