package pop

import "popsim/model"

// PopStage is one read of a pop that found messages: a queue of the
// requested topic or of one of its retry topics, read from StartOffset.
// Where RocketMQ's PopConsumerContext appends a startOffsetInfo and a
// msgOffsetInfo entry per read, a pop records the read in a few stores;
// the headers' text is only written when someone asks for it
// (PopResult.AppendStartOffsetInfo and the methods beside it), which
// nothing in the simulator does.
type PopStage struct {
	RetryFlag   model.RetryType // the stage topic's retry flag (model.RetryFlagOf)
	QueueID     int32
	StartOffset int64
	// Count is how many of the result's Messages the stage read: those
	// after the previous stages'.
	Count int32
}

// AppendStartOffsetInfo appends the startOffsetInfo response header,
// formatted on demand from r.Stages: an entry `retryFlag queueId
// startOffset` per stage, entries joined by ';' (model.AppendOffsetInfo's
// bytes; model.ParseStartOffsetInfo reads them).
func (r *PopResult) AppendStartOffsetInfo(dst []byte) []byte {
	for i := range r.Stages {
		s := &r.Stages[i]
		if i > 0 {
			dst = append(dst, ';')
		}
		dst = appendInfoPrefix(dst, s.RetryFlag, s.QueueID)
		dst = model.AppendDec(dst, s.StartOffset)
	}
	return dst
}

// AppendMsgOffsetInfo appends the msgOffsetInfo response header, formatted
// on demand from r.Stages and the queue offsets of r.Messages: an entry
// `retryFlag queueId o1,o2,...` per stage listing the offsets of the
// messages it read, entries joined by ';' (model.AppendOffsetInfo's bytes;
// model.ParseMsgOffsetInfo reads them). It reads Messages as the pop
// left them: a caller that drops some (the proxy's filter) reads the
// header before, as the broker's response carried it.
func (r *PopResult) AppendMsgOffsetInfo(dst []byte) []byte {
	j := 0
	for i := range r.Stages {
		s := &r.Stages[i]
		if i > 0 {
			dst = append(dst, ';')
		}
		dst = appendInfoPrefix(dst, s.RetryFlag, s.QueueID)
		for k := int32(0); k < s.Count && j < len(r.Messages); k++ {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = model.AppendDec(dst, r.Messages[j].Message.QueueOffset)
			j++
		}
	}
	return dst
}

// AppendOrderCountInfo appends a FIFO pop's orderCountInfo response
// header, formatted on demand from r.OrderCounts (model.AppendOrderCount's
// entries joined by ';'; model.ParseOrderCountInfo reads them). Other pops
// have none.
func (r *PopResult) AppendOrderCountInfo(dst []byte) []byte {
	for i, e := range r.OrderCounts {
		if i > 0 {
			dst = append(dst, ';')
		}
		dst = model.AppendOrderCountEntry(dst, e)
	}
	return dst
}

// StartOffsetInfo is the startOffsetInfo response header, formatted on
// demand (AppendStartOffsetInfo, into a new string).
func (r *PopResult) StartOffsetInfo() string { return string(r.AppendStartOffsetInfo(nil)) }

// MsgOffsetInfo is the msgOffsetInfo response header, formatted on demand
// (AppendMsgOffsetInfo, into a new string).
func (r *PopResult) MsgOffsetInfo() string { return string(r.AppendMsgOffsetInfo(nil)) }

// OrderCountInfo is the orderCountInfo response header of a FIFO pop,
// formatted on demand (AppendOrderCountInfo, into a new string); "" for
// other pops.
func (r *PopResult) OrderCountInfo() string { return string(r.AppendOrderCountInfo(nil)) }

// addStage records a stage of the answer that read the last n of its
// Messages.
func (r *PopResult) addStage(flag model.RetryType, qid int32, start int64, n int) {
	r.Stages = append(r.Stages, PopStage{RetryFlag: flag, QueueID: qid, StartOffset: start, Count: int32(n)})
}

// appendInfoPrefix appends an offset-info entry's `retryFlag queueId `
// prefix.
func appendInfoPrefix(dst []byte, flag model.RetryType, qid int32) []byte {
	dst = model.AppendDec(dst, int64(flag))
	dst = append(dst, ' ')
	dst = model.AppendDec(dst, int64(qid))
	return append(dst, ' ')
}
