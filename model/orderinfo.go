package model

import (
	"slices"
	"strconv"
)

// OrderInfo is the orderly (FIFO) POP state of one queue for one consumer
// group (ConsumerOrderInfoManager.OrderInfo, 5.4.0's
// QueueLevelConsumerManager.OrderInfo): the batch a FIFO pop handed out,
// which of its messages are acked, their next-visible times and how often
// each was handed out before. The broker keeps one per (topic@group,
// queueId) and persists the table as JSON with upstream's short keys.
type OrderInfo struct {
	PopTime int64 // popTime: the pop time of the batch (epoch ms)
	// InvisibleTime (i) is the batch's lease in ms; HasInvisibleTime false
	// is null (data written by old versions), which needBlock replaces
	// with the caller's invisible time.
	InvisibleTime    int64
	HasInvisibleTime bool
	// OffsetList (o): element 0 is the first queue offset, element i > 0
	// the distance of message i from it; a one-element list holds the
	// offset itself.
	OffsetList []int64
	// NextVisible (ot) maps a queue offset to its absolute next-visible
	// time (set by changeInvisibleTime); ConsumedCount (oc) maps a queue
	// offset to how many times it was handed out before (entries > 0
	// only). Both are sorted by offset; nil is null.
	NextVisible   []OffsetValue
	ConsumedCount []OffsetValue
	// LastConsumeTimestamp (l) is the time of the last update (epoch ms).
	LastConsumeTimestamp int64
	// CommitOffsetBit (cm): bit i set means offsetList index i is acked.
	CommitOffsetBit int64
	// AttemptID (a) is the attemptId of the pop that made this OrderInfo;
	// "" is null.
	AttemptID string
}

// OffsetValue is one entry of an OrderInfo map keyed by queue offset.
type OffsetValue struct {
	Offset, Value int64
}

// BuildOffsetList is OrderInfo.buildOffsetList: the first offset, then
// each later offset as its distance from the first.
func BuildOffsetList(offsets []int64) []int64 {
	out := make([]int64, len(offsets))
	if len(offsets) == 1 {
		out[0] = offsets[0]
		return out
	}
	for i, o := range offsets {
		if i == 0 {
			out[i] = o
		} else {
			out[i] = o - offsets[0]
		}
	}
	return out
}

// QueueOffset is getQueueOffset: the queue offset of index i.
func (o *OrderInfo) QueueOffset(i int) int64 { return queueOffsetOf(o.OffsetList, i) }

func queueOffsetOf(list []int64, i int) int64 {
	if i == 0 {
		return list[0]
	}
	return list[0] + list[i]
}

// Index is the index of queue offset off in the list, -1 when absent.
func (o *OrderInfo) Index(off int64) int {
	for i := range o.OffsetList {
		if o.QueueOffset(i) == off {
			return i
		}
	}
	return -1
}

// IsNotAck is isNotAck: index i is not acked.
func (o *OrderInfo) IsNotAck(i int) bool { return o.CommitOffsetBit&(1<<uint(i)) == 0 }

// NextOffset is getNextOffset: -2 for an empty list; else the queue offset
// of the first index not acked, or the last offset + 1 when all are.
func (o *OrderInfo) NextOffset() int64 {
	n := len(o.OffsetList)
	if n == 0 {
		return -2
	}
	for i := 0; i < n; i++ {
		if o.IsNotAck(i) {
			return o.QueueOffset(i)
		}
	}
	return o.QueueOffset(n-1) + 1
}

// NextVisibleTime is the next-visible time of index i: its ot entry, else
// popTime + invisibleTime.
func (o *OrderInfo) NextVisibleTime(i int) int64 {
	if v, ok := lookup(o.NextVisible, o.QueueOffset(i)); ok {
		return v
	}
	return o.PopTime + o.InvisibleTime
}

// NeedBlock is needBlock at nowMs: false for an empty list or a request
// with this OrderInfo's attemptId (a re-entrant retry); otherwise a null
// or non-positive invisible time is replaced by the caller's (it mutates
// o, as upstream), and the queue is blocked while any index not acked is
// before its next-visible time.
func (o *OrderInfo) NeedBlock(attemptID string, invisibleMs, nowMs int64) bool {
	if len(o.OffsetList) == 0 {
		return false
	}
	if o.AttemptID != "" && o.AttemptID == attemptID {
		return false
	}
	if !o.HasInvisibleTime || o.InvisibleTime <= 0 {
		o.InvisibleTime, o.HasInvisibleTime = invisibleMs, true
	}
	for i := range o.OffsetList {
		if o.IsNotAck(i) && nowMs < o.NextVisibleTime(i) {
			return true
		}
	}
	return false
}

// LockFreeTimestamp is getLockFreeTimestamp at nowMs: the next-visible
// time of the first index not acked that is still in the future; nowMs
// when none is pending; false (null) for an empty list or an unknown
// invisible time.
func (o *OrderInfo) LockFreeTimestamp(nowMs int64) (int64, bool) {
	if len(o.OffsetList) == 0 {
		return 0, false
	}
	for i := range o.OffsetList {
		if !o.IsNotAck(i) {
			continue
		}
		if !o.HasInvisibleTime || o.InvisibleTime <= 0 {
			return 0, false
		}
		if t := o.NextVisibleTime(i); nowMs < t {
			return t, true
		}
	}
	return nowMs, true
}

// UnblockTime is when the batch stops blocking its queue: the latest
// next-visible time of an index not acked; false when every index is
// acked (or the list is empty).
func (o *OrderInfo) UnblockTime() (int64, bool) {
	var t int64
	ok := false
	for i := range o.OffsetList {
		if o.IsNotAck(i) {
			if v := o.NextVisibleTime(i); !ok || v > t {
				t, ok = v, true
			}
		}
	}
	return t, ok
}

// SetNextVisible is updateOffsetNextVisibleTime: ot[off] = t.
func (o *OrderInfo) SetNextVisible(off, t int64) { o.NextVisible = put(o.NextVisible, off, t) }

// Count is offsetConsumedCount[off], 0 when absent.
func (o *OrderInfo) Count(off int64) int64 {
	v, _ := lookup(o.ConsumedCount, off)
	return v
}

// MergeConsumedCount is mergeOffsetConsumedCount against the previous
// OrderInfo of the queue: with the same (non-null) attemptId the previous
// counts are kept as they are (a re-entrant retry is not a new attempt);
// otherwise each offset of this batch that was in the previous batch gets
// its previous count + 1, and the others none.
func (o *OrderInfo) MergeConsumedCount(prev *OrderInfo) {
	if prev.AttemptID != "" && prev.AttemptID == o.AttemptID {
		o.ConsumedCount = slices.Clone(prev.ConsumedCount)
		if o.ConsumedCount == nil {
			o.ConsumedCount = []OffsetValue{}
		}
		return
	}
	out := []OffsetValue{}
	for i := range o.OffsetList {
		off := o.QueueOffset(i)
		if prev.Index(off) >= 0 {
			out = put(out, off, prev.Count(off)+1)
		}
	}
	o.ConsumedCount = out
}

// AppendOrderCountInfo appends the orderCountInfo header of this
// OrderInfo on queue qid of a topic with retry flag flag: the entries of
// AppendOrderCounts, formatted (AppendOrderCount).
func (o *OrderInfo) AppendOrderCountInfo(dst []byte, flag RetryType, qid int32) []byte {
	for _, e := range o.AppendOrderCounts(nil, flag, qid) {
		dst = AppendOrderCount(dst, e)
	}
	return dst
}

// AppendOrderCounts appends the orderCountInfo entries update builds for
// this OrderInfo on queue qid of a topic with retry flag flag: one per
// counted offset (in offset order; upstream walks a HashMap), then the
// queue's entry with the smallest count, 0 when an offset of the batch
// has none (the entry old SDKs read).
func (o *OrderInfo) AppendOrderCounts(dst []OrderCount, flag RetryType, qid int32) []OrderCount {
	minCount := int64(0)
	if o.ConsumedCount != nil {
		minCount = int64(1<<31 - 1)
		for _, e := range o.ConsumedCount {
			dst = append(dst, OrderCount{RetryFlag: flag, QueueID: qid, Offset: e.Offset, Count: int32(e.Value)})
			minCount = min(minCount, e.Value)
		}
		if len(o.ConsumedCount) != len(o.OffsetList) {
			minCount = 0
		}
	}
	return append(dst, OrderCount{RetryFlag: flag, QueueID: qid, Offset: -1, Count: int32(minCount)})
}

// Clone returns a deep copy.
func (o *OrderInfo) Clone() OrderInfo {
	c := *o
	c.OffsetList = slices.Clone(o.OffsetList)
	c.NextVisible = slices.Clone(o.NextVisible)
	c.ConsumedCount = slices.Clone(o.ConsumedCount)
	return c
}

func lookup(xs []OffsetValue, off int64) (int64, bool) {
	i, ok := slices.BinarySearchFunc(xs, off, func(e OffsetValue, t int64) int { return cmpInt(e.Offset, t) })
	if !ok {
		return 0, false
	}
	return xs[i].Value, true
}

func put(xs []OffsetValue, off, v int64) []OffsetValue {
	i, ok := slices.BinarySearchFunc(xs, off, func(e OffsetValue, t int64) int { return cmpInt(e.Offset, t) })
	if ok {
		xs[i].Value = v
		return xs
	}
	if xs == nil {
		xs = []OffsetValue{}
	}
	return slices.Insert(xs, i, OffsetValue{off, v})
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// AppendJSON appends the OrderInfo's JSON: fastjson's sorted keys, null
// fields left out. popsim writes the ot and oc maps' offsets as quoted
// keys in offset order (fastjson writes a HashMap's Long keys unquoted, in
// its own order); ParseOrderInfo reads both.
func (o *OrderInfo) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	first := true
	sep := func(key string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, key)
		b = append(b, ':')
	}
	if o.AttemptID != "" {
		sep("a")
		b = appendJSONString(b, o.AttemptID)
	}
	sep("cm")
	b = strconv.AppendInt(b, o.CommitOffsetBit, 10)
	if o.HasInvisibleTime {
		sep("i")
		b = strconv.AppendInt(b, o.InvisibleTime, 10)
	}
	sep("l")
	b = strconv.AppendInt(b, o.LastConsumeTimestamp, 10)
	if o.OffsetList != nil {
		sep("o")
		b = append(b, '[')
		for i, v := range o.OffsetList {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, ']')
	}
	if o.ConsumedCount != nil {
		sep("oc")
		b = appendOffsetMap(b, o.ConsumedCount)
	}
	if o.NextVisible != nil {
		sep("ot")
		b = appendOffsetMap(b, o.NextVisible)
	}
	sep("popTime")
	b = strconv.AppendInt(b, o.PopTime, 10)
	return append(b, '}')
}

func appendOffsetMap(b []byte, xs []OffsetValue) []byte {
	b = append(b, '{')
	for i, e := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, e.Offset, 10)
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, e.Value, 10)
	}
	return append(b, '}')
}

// ParseOrderInfo decodes an OrderInfo's JSON (as AppendJSON writes it, or
// with fastjson's unquoted map keys); unknown keys are skipped. It never
// panics.
func ParseOrderInfo(data []byte) (OrderInfo, error) {
	var o OrderInfo
	err := parseObject(data, "OrderInfo", func(p *jsonParser, key string) error {
		var err error
		switch key {
		case "popTime":
			o.PopTime, err = p.int(64)
		case "i":
			p.ws()
			if p.null() {
				return nil
			}
			o.InvisibleTime, err = p.int(64)
			o.HasInvisibleTime = err == nil
		case "o":
			o.OffsetList, err = p.int64s()
		case "ot":
			o.NextVisible, err = p.offsetMap(64)
		case "oc":
			o.ConsumedCount, err = p.offsetMap(32)
		case "l":
			o.LastConsumeTimestamp, err = p.int(64)
		case "cm":
			o.CommitOffsetBit, err = p.int(64)
		case "a":
			o.AttemptID, _, err = p.str()
		default:
			err = p.skip()
		}
		return err
	})
	return o, err
}

// offsetMap reads an object of queue offsets (quoted or bare integer
// keys) to integers of bits; null is nil. A repeated key keeps the last
// value.
func (p *jsonParser) offsetMap(bits int) ([]OffsetValue, error) {
	p.ws()
	if p.null() {
		return nil, nil
	}
	if !p.eat('{') {
		return nil, p.fail("want an object")
	}
	out := []OffsetValue{}
	if p.eat('}') {
		return out, nil
	}
	for {
		p.ws()
		quoted := p.eat('"')
		k, err := p.int(64)
		if err != nil {
			return nil, err
		}
		if quoted && !p.eat('"') {
			return nil, p.fail("want '\"' after a quoted key")
		}
		if !p.eat(':') {
			return nil, p.fail("want ':'")
		}
		v, err := p.int(bits)
		if err != nil {
			return nil, err
		}
		out = put(out, k, v)
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			return out, nil
		}
		return nil, p.fail("want ',' or '}'")
	}
}
