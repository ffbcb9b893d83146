package model

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// RetryType is a record's retryFlag (PopConsumerRecord.RetryType) and the
// receipt handle's retryFlag field.
type RetryType int32

// Retry types, with RocketMQ's codes.
const (
	NormalTopic      RetryType = 0
	RetryTopicV1Type RetryType = 1
	RetryTopicV2Type RetryType = 2
)

// IsRetry reports retryFlag != 0.
func (r RetryType) IsRetry() bool { return r != NormalTopic }

// PopConsumerRecord is one in-flight message of the KV (record) path: the
// broker keeps it until the message is acked, renewed or revived.
type PopConsumerRecord struct {
	PopTime       int64     `json:"popTime"`
	GroupID       string    `json:"groupId"`
	TopicID       string    `json:"topicId"`
	QueueID       int32     `json:"queueId"`
	RetryFlag     RetryType `json:"retryFlag"`
	InvisibleTime int64     `json:"invisibleTime"`
	Offset        int64     `json:"offset"`
	AttemptTimes  int32     `json:"attemptTimes"`
	AttemptID     string    `json:"attemptId,omitempty"`
}

// VisibilityTimeout is popTime + invisibleTime: when the record revives.
func (r *PopConsumerRecord) VisibilityTimeout() int64 { return r.PopTime + r.InvisibleTime }

// KeyLen is the length of the record's store key.
func (r *PopConsumerRecord) KeyLen() int {
	return 8 + len(r.GroupID) + 1 + len(r.TopicID) + 1 + 4 + 1 + 8
}

// AppendKey appends the store key in RocketMQ's layout: 8-byte big-endian
// visibilityTimeout, group, '@', topic, '@', 4-byte big-endian queueId, '@',
// 8-byte big-endian offset. Group "GroupId" and topic "TopicId" give 37
// bytes. Keys sort bytewise, which is the order of the expired-range scan.
func (r *PopConsumerRecord) AppendKey(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.VisibilityTimeout()))
	dst = append(dst, r.GroupID...)
	dst = append(dst, '@')
	dst = append(dst, r.TopicID...)
	dst = append(dst, '@')
	dst = binary.BigEndian.AppendUint32(dst, uint32(r.QueueID))
	dst = append(dst, '@')
	return binary.BigEndian.AppendUint64(dst, uint64(r.Offset))
}

// Key returns the store key (see AppendKey).
func (r *PopConsumerRecord) Key() []byte { return r.AppendKey(make([]byte, 0, r.KeyLen())) }

// RecordKey is a decoded store key.
type RecordKey struct {
	VisibilityTimeout int64
	GroupID, TopicID  string
	QueueID           int32
	Offset            int64
}

// ParseRecordKey decodes a store key produced by AppendKey.
func ParseRecordKey(b []byte) (RecordKey, error) {
	const fixed = 8 + 1 + 1 + 4 + 1 + 8
	if len(b) < fixed+2 {
		return RecordKey{}, fmt.Errorf("model: record key of %d bytes is too short: want at least %d", len(b), fixed+2)
	}
	names := b[8 : len(b)-13]
	tail := b[len(b)-13:]
	if names[len(names)-1] != '@' || tail[4] != '@' {
		return RecordKey{}, fmt.Errorf("model: record key is missing an '@' separator before the queueId or offset")
	}
	names = names[:len(names)-1]
	i := bytes.IndexByte(names, '@')
	if i <= 0 || i == len(names)-1 || bytes.IndexByte(names[i+1:], '@') >= 0 {
		return RecordKey{}, fmt.Errorf("model: record key names %q: want <group>@<topic>", names)
	}
	return RecordKey{
		VisibilityTimeout: int64(binary.BigEndian.Uint64(b[:8])),
		GroupID:           string(names[:i]),
		TopicID:           string(names[i+1:]),
		QueueID:           int32(binary.BigEndian.Uint32(tail[:4])),
		Offset:            int64(binary.BigEndian.Uint64(tail[5:])),
	}, nil
}

// CompareRecordKeys orders two records exactly as their store keys sort.
func CompareRecordKeys(a, b *PopConsumerRecord) int {
	return bytes.Compare(a.Key(), b.Key())
}

// Encode returns the record's JSON value, fields in RocketMQ's order.
func (r *PopConsumerRecord) Encode() []byte {
	b, _ := json.Marshal(r) // cannot fail: plain fields only
	return b
}

// DecodePopConsumerRecord parses a JSON value written by Encode (or by
// RocketMQ's fastjson). It must be exactly one JSON object: unknown fields,
// null, other JSON types and trailing data are errors.
func DecodePopConsumerRecord(b []byte) (*PopConsumerRecord, error) {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("model: decoding PopConsumerRecord %q: want a JSON object", clip(string(b)))
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var r PopConsumerRecord
	if err := d.Decode(&r); err != nil {
		return nil, fmt.Errorf("model: decoding PopConsumerRecord: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("model: decoding PopConsumerRecord %q: want one JSON object, found more after it", clip(string(b)))
	}
	return &r, nil
}

// String renders the record deterministically for traces and tests.
func (r *PopConsumerRecord) String() string {
	s := "record{vt=" + strconv.FormatInt(r.VisibilityTimeout(), 10) +
		" " + r.GroupID + "@" + r.TopicID + "@" + strconv.Itoa(int(r.QueueID)) +
		"@" + strconv.FormatInt(r.Offset, 10) +
		" pt=" + strconv.FormatInt(r.PopTime, 10) +
		" it=" + strconv.FormatInt(r.InvisibleTime, 10) +
		" retry=" + strconv.Itoa(int(r.RetryFlag)) +
		" attempts=" + strconv.Itoa(int(r.AttemptTimes))
	if r.AttemptID != "" {
		s += " attemptId=" + r.AttemptID
	}
	return s + "}"
}
