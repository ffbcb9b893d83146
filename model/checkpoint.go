package model

import "strconv"

// The checkpoint (FS) POP path's revive-topic payloads, with RocketMQ's
// names: PopCheckPoint (the body of a "ck" message), AckMsg ("ack") and
// BatchAckMsg ("bAck"). Their JSON form uses upstream's short keys
// (fastjson @JSONField names), written in fastjson's sorted key order;
// the decoders also accept AckMsg's long alternate names, skip unknown
// keys (fastjson writes getter-only properties such as reviveTime too)
// and never panic. The engine keeps these typed and writes the JSON into
// the revive topic's message bodies, so a revive-topic message reads as a
// real broker's would.

// Revive-topic message tags (PopAckConstants) and the system group that
// consumes the revive topic.
const (
	CkTag             = "ck"
	AckTag            = "ack"
	BatchAckTag       = "bAck"
	ReviveGroup       = "CID_RMQ_SYS_REVIVE_GROUP"
	ReviveTopicPrefix = "rmq_sys_REVIVE_LOG_"
	// PropertyTimerDeliverMs is the deliver time of a timer message
	// (MessageConst.PROPERTY_TIMER_DELIVER_MS), epoch milliseconds.
	PropertyTimerDeliverMs = "TIMER_DELIVER_MS"
)

// ReviveTopic is the cluster's revive topic (PopAckConstants.buildClusterReviveTopic).
func ReviveTopic(cluster string) string { return ReviveTopicPrefix + cluster }

// PopCheckPoint is one pop batch on one queue (store/pop/PopCheckPoint):
// which offsets were lent, when, for how long, and which of them are acked.
type PopCheckPoint struct {
	StartOffset   int64 // so: the offset the pop asked for (before any correction)
	PopTime       int64 // pt, epoch ms
	InvisibleTime int64 // it, ms
	BitMap        int32 // bm: acked indexes (bit i = index i)
	QueueID       int32 // q
	ReviveOffset  int64 // ro: the CK message's offset in its revive queue, set when read
	// QueueOffsetDiff (d) holds msgOffset - startOffset per message; nil
	// for an old-format checkpoint, whose messages are startOffset + i.
	// (The fields up to here are what a revive round reads of a CK and
	// its acks' IndexOfAck: the first 64 bytes, one cache line when
	// aligned.)
	QueueOffsetDiff []int32
	Topic           string // t: the real topic (a retry topic for retry messages)
	CID             string // c: the consumer group
	BrokerName      string // bn
	// RePutTimes (rp) is a decimal string; HasRePutTimes false means
	// null (absent).
	RePutTimes string
	// Num (n) is the messages in the batch (a byte; 0 for a mock), beside
	// HasRePutTimes: the two fill one word (136 bytes, not 144).
	Num           int8
	HasRePutTimes bool
}

// ReviveTime is popTime + invisibleTime.
func (c *PopCheckPoint) ReviveTime() int64 { return c.PopTime + c.InvisibleTime }

// IndexOfAck is indexOfAck: the index of ackOffset in the batch, -1 when
// it is not one of its offsets. As upstream, the difference is narrowed to
// 32 bits before the lookup (apache/rocketmq#11180).
func (c *PopCheckPoint) IndexOfAck(ackOffset int64) int {
	if ackOffset < c.StartOffset {
		return -1
	}
	d := int32(ackOffset - c.StartOffset)
	if len(c.QueueOffsetDiff) == 0 {
		if ackOffset-c.StartOffset < int64(c.Num) {
			return int(ackOffset - c.StartOffset)
		}
		return -1
	}
	for i, x := range c.QueueOffsetDiff {
		if x == d {
			return i
		}
	}
	return -1
}

// AckOffsetByIndex is the queue offset of index i.
func (c *PopCheckPoint) AckOffsetByIndex(i int) int64 {
	if len(c.QueueOffsetDiff) == 0 {
		return c.StartOffset + int64(i)
	}
	return c.StartOffset + int64(c.QueueOffsetDiff[i])
}

// ParseRePutTimes is parseRePutTimes: null is 0, an unparsable value 127.
func (c *PopCheckPoint) ParseRePutTimes() int {
	if !c.HasRePutTimes {
		return 0
	}
	n, err := strconv.ParseInt(c.RePutTimes, 10, 32)
	if err != nil {
		return 127
	}
	return int(n)
}

// MergeKey is the key the buffer and the revive service pair a checkpoint
// with its acks by: topic, group, queue, start offset, pop time and broker
// name concatenated without separators, as upstream (so distinct tuples
// can in principle collide).
func (c *PopCheckPoint) MergeKey() string {
	return MergeKey(c.Topic, c.CID, c.QueueID, c.StartOffset, c.PopTime, c.BrokerName)
}

// AppendMergeKey appends the merge key MergeKey returns to b.
func (c *PopCheckPoint) AppendMergeKey(b []byte) []byte {
	return AppendMergeKey(b, c.Topic, c.CID, c.QueueID, c.StartOffset, c.PopTime, c.BrokerName)
}

// MergeKey builds the concatenated merge key. popsim keeps a null broker
// name as "", which Java's concatenation writes as "null".
func MergeKey(topic, group string, qid int32, startOffset, popTime int64, brokerName string) string {
	var buf [keyBuf]byte // on the stack: the string is the one allocation
	return string(AppendMergeKey(buf[:0], topic, group, qid, startOffset, popTime, brokerName))
}

// AppendMergeKey appends the merge key MergeKey returns to b.
func AppendMergeKey(b []byte, topic, group string, qid int32, startOffset, popTime int64, brokerName string) []byte {
	b = append(b, topic...)
	b = append(b, group...)
	b = AppendDec(b, int64(qid))
	b = AppendDec(b, startOffset)
	b = AppendDec(b, popTime)
	if brokerName == "" {
		brokerName = "null"
	}
	return append(b, brokerName...)
}

// UniqueID is genCkUniqueId: topic@queueId@startOffset@cid@popTime@brokerName@ck.
func (c *PopCheckPoint) UniqueID() string {
	var buf [keyBuf]byte
	return string(c.AppendUniqueID(buf[:0]))
}

// AppendUniqueID appends the id UniqueID returns to b.
func (c *PopCheckPoint) AppendUniqueID(b []byte) []byte {
	b = appendAt(b, c.Topic, int64(c.QueueID), c.StartOffset, c.CID, c.PopTime)
	b = append(append(b, c.BrokerName...), '@')
	return append(b, CkTag...)
}

// AppendJSON appends the checkpoint's JSON (fastjson's sorted short keys).
func (c *PopCheckPoint) AppendJSON(b []byte) []byte {
	b = append(b, `{"bm":`...)
	b = AppendDec(b, int64(c.BitMap))
	if c.BrokerName != "" { // null: fastjson omits it
		b = appendStrField(b, `,"bn":`, c.BrokerName)
	}
	b = appendStrField(b, `,"c":`, c.CID)
	if c.QueueOffsetDiff != nil {
		b = append(b, `,"d":[`...)
		for i, d := range c.QueueOffsetDiff {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendDec(b, int64(d))
		}
		b = append(b, ']')
	}
	b = appendIntField(b, `,"it":`, c.InvisibleTime)
	b = appendIntField(b, `,"n":`, int64(c.Num))
	b = appendIntField(b, `,"pt":`, c.PopTime)
	b = appendIntField(b, `,"q":`, int64(c.QueueID))
	b = appendIntField(b, `,"ro":`, c.ReviveOffset)
	if c.HasRePutTimes {
		b = appendStrField(b, `,"rp":`, c.RePutTimes)
	}
	b = appendIntField(b, `,"so":`, c.StartOffset)
	b = appendStrField(b, `,"t":`, c.Topic)
	return append(b, '}')
}

// ParsePopCheckPoint decodes a checkpoint's JSON.
func ParsePopCheckPoint(data []byte) (PopCheckPoint, error) {
	var c PopCheckPoint
	err := parseObject(data, "PopCheckPoint", func(p *jsonParser, key string) error {
		var err error
		switch key {
		case "so":
			c.StartOffset, err = p.int(64)
		case "pt":
			c.PopTime, err = p.int(64)
		case "it":
			c.InvisibleTime, err = p.int(64)
		case "bm":
			var v int64
			v, err = p.int(32)
			c.BitMap = int32(v)
		case "n":
			var v int64
			v, err = p.int(8)
			c.Num = int8(v)
		case "q":
			var v int64
			v, err = p.int(32)
			c.QueueID = int32(v)
		case "t":
			c.Topic, _, err = p.str()
		case "c":
			c.CID, _, err = p.str()
		case "ro":
			c.ReviveOffset, err = p.int(64)
		case "d":
			c.QueueOffsetDiff, err = p.int32s()
		case "bn":
			c.BrokerName, _, err = p.str()
		case "rp":
			c.RePutTimes, c.HasRePutTimes, err = p.str()
		default:
			err = p.skip()
		}
		return err
	})
	return c, err
}

// AckMsg is one acked offset of a checkpoint (store/pop/AckMsg).
type AckMsg struct {
	AckOffset     int64  // ao
	StartOffset   int64  // so
	ConsumerGroup string // c
	Topic         string // t
	QueueID       int32  // q
	PopTime       int64  // pt
	BrokerName    string // bn
}

// MergeKey is the merge key of the checkpoint the ack belongs to.
func (a *AckMsg) MergeKey() string {
	return MergeKey(a.Topic, a.ConsumerGroup, a.QueueID, a.StartOffset, a.PopTime, a.BrokerName)
}

// AppendMergeKey appends the merge key MergeKey returns to b.
func (a *AckMsg) AppendMergeKey(b []byte) []byte {
	return AppendMergeKey(b, a.Topic, a.ConsumerGroup, a.QueueID, a.StartOffset, a.PopTime, a.BrokerName)
}

// UniqueID is genAckUniqueId: topic@queueId@ackOffset@group@popTime@brokerName@ack.
func (a *AckMsg) UniqueID() string {
	var buf [keyBuf]byte
	return string(a.AppendUniqueID(buf[:0]))
}

// AppendUniqueID appends the id UniqueID returns to b.
func (a *AckMsg) AppendUniqueID(b []byte) []byte {
	b = appendAt(b, a.Topic, int64(a.QueueID), a.AckOffset, a.ConsumerGroup, a.PopTime)
	b = append(append(b, a.BrokerName...), '@')
	return append(b, AckTag...)
}

// keyBuf is room on the stack for the usual merge key or unique id, so
// that building one allocates only the string.
const keyBuf = 160

// appendAt appends "topic@qid@offset@group@popTime@", the head that the
// unique ids of CK and ack messages share.
func appendAt(b []byte, topic string, qid, offset int64, group string, popTime int64) []byte {
	b = append(append(b, topic...), '@')
	b = append(AppendDec(b, qid), '@')
	b = append(AppendDec(b, offset), '@')
	b = append(append(b, group...), '@')
	return append(AppendDec(b, popTime), '@')
}

// AppendJSON appends the ack's JSON.
func (a *AckMsg) AppendJSON(b []byte) []byte {
	b = append(b, `{"ao":`...)
	b = AppendDec(b, a.AckOffset)
	b = a.appendRest(b)
	return append(b, '}')
}

func (a *AckMsg) appendRest(b []byte) []byte {
	if a.BrokerName != "" { // null (a batch ack's): fastjson omits it
		b = appendStrField(b, `,"bn":`, a.BrokerName)
	}
	b = appendStrField(b, `,"c":`, a.ConsumerGroup)
	b = appendIntField(b, `,"pt":`, a.PopTime)
	b = appendIntField(b, `,"q":`, int64(a.QueueID))
	b = appendIntField(b, `,"so":`, a.StartOffset)
	b = appendStrField(b, `,"t":`, a.Topic)
	return b
}

// field decodes one AckMsg key (short or long name); it reports whether
// the key was one of AckMsg's.
func (a *AckMsg) field(p *jsonParser, key string) (bool, error) {
	var err error
	switch key {
	case "ao", "ackOffset":
		a.AckOffset, err = p.int(64)
	case "so", "startOffset":
		a.StartOffset, err = p.int(64)
	case "c", "consumerGroup":
		a.ConsumerGroup, _, err = p.str()
	case "t", "topic":
		a.Topic, _, err = p.str()
	case "q", "queueId":
		var v int64
		v, err = p.int(32)
		a.QueueID = int32(v)
	case "pt", "popTime":
		a.PopTime, err = p.int(64)
	case "bn", "brokerName":
		a.BrokerName, _, err = p.str()
	default:
		return false, nil
	}
	return true, err
}

// ParseAckMsg decodes an ack's JSON, short or long names.
func ParseAckMsg(data []byte) (AckMsg, error) {
	var a AckMsg
	err := parseObject(data, "AckMsg", func(p *jsonParser, key string) error {
		if ok, err := a.field(p, key); ok {
			return err
		}
		return p.skip()
	})
	return a, err
}

// BatchAckMsg is several acked offsets of one checkpoint
// (store/pop/BatchAckMsg); AckOffset is -1 there.
type BatchAckMsg struct {
	AckMsg
	AckOffsetList []int64 // aol
}

// UniqueID is genBatchAckUniqueId: topic@queueId@[offsets]@group@popTime@bAck
// (no broker name; the list as Java's List.toString writes it).
func (a *BatchAckMsg) UniqueID() string {
	var buf [keyBuf]byte
	return string(a.AppendUniqueID(buf[:0]))
}

// AppendUniqueID appends the id UniqueID returns to b.
func (a *BatchAckMsg) AppendUniqueID(b []byte) []byte {
	b = append(append(b, a.Topic...), '@')
	b = append(AppendDec(b, int64(a.QueueID)), '@', '[')
	for i, o := range a.AckOffsetList {
		if i > 0 {
			b = append(b, ',', ' ')
		}
		b = AppendDec(b, o)
	}
	b = append(append(b, ']', '@'), a.ConsumerGroup...)
	b = append(AppendDec(append(b, '@'), a.PopTime), '@')
	return append(b, BatchAckTag...)
}

// AppendJSON appends the batch ack's JSON.
func (a *BatchAckMsg) AppendJSON(b []byte) []byte {
	b = append(b, `{"ao":`...)
	b = AppendDec(b, a.AckOffset)
	b = append(b, `,"aol":[`...)
	for i, o := range a.AckOffsetList {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendDec(b, o)
	}
	b = append(b, ']')
	b = a.appendRest(b)
	return append(b, '}')
}

// ParseBatchAckMsg decodes a batch ack's JSON.
func ParseBatchAckMsg(data []byte) (BatchAckMsg, error) {
	var a BatchAckMsg
	err := parseObject(data, "BatchAckMsg", func(p *jsonParser, key string) error {
		if key == "aol" || key == "ackOffsetList" {
			var err error
			a.AckOffsetList, err = p.int64s()
			return err
		}
		if ok, err := a.field(p, key); ok {
			return err
		}
		return p.skip()
	})
	return a, err
}

// appendIntField appends a field: its prefix (the separator and the
// quoted key with its colon, as `,"k":`) and v.
func appendIntField(b []byte, prefix string, v int64) []byte {
	return AppendDec(append(b, prefix...), v)
}

// appendStrField appends a field: its prefix (`,"k":`) and v, quoted.
func appendStrField(b []byte, prefix, v string) []byte {
	return appendJSONString(append(b, prefix...), v)
}
