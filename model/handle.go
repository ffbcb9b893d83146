package model

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrMalformedHandle is wrapped by every receipt-handle decoding error.
var ErrMalformedHandle = errors.New("malformed receipt handle")

// ReceiptHandle is the decoded extraInfo string (message property POP_CK):
//
//	ckQueueOffset popTime invisibleTime reviveQid retryFlag brokerName queueId msgQueueOffset [commitLogOffset]
//
// The proxy's receipt handle is the same string with the ninth field;
// CommitLogOffset is -1 when it is absent. Times are epoch milliseconds.
// The decoder accepts what RocketMQ's ReceiptHandle.decode accepts, so a
// field may hold any value its Java type does (negative times included),
// and RetryFlag is the meaning getRealTopic gives field 5: "1" is V1, "2"
// is V2, any other text the normal topic.
type ReceiptHandle struct {
	CkQueueOffset   int64
	PopTime         int64
	InvisibleTime   int64
	ReviveQueueID   int32
	RetryFlag       RetryType
	BrokerName      string
	QueueID         int32
	QueueOffset     int64
	CommitLogOffset int64
}

// NextVisibleTime is popTime + invisibleTime.
func (h *ReceiptHandle) NextVisibleTime() int64 { return h.PopTime + h.InvisibleTime }

// IsExpired is the proxy's check: nextVisibleTime <= now (ms).
func (h *ReceiptHandle) IsExpired(nowMs int64) bool { return h.NextVisibleTime() <= nowMs }

// IsOrder reports a FIFO handle (reviveQid 999).
func (h *ReceiptHandle) IsOrder() bool { return h.ReviveQueueID == PopOrderReviveQueue }

// RealTopic is the topic to ack or renew on (ReceiptHandle.getRealTopic).
func (h *ReceiptHandle) RealTopic(topic, group string) string {
	return RealTopic(topic, group, h.RetryFlag)
}

// AppendExtraInfo appends the 8-field extraInfo form, plus the ninth
// commitLogOffset field unless it is -1 (absent): the proxy form.
func (h *ReceiptHandle) AppendExtraInfo(dst []byte) []byte {
	dst = strconv.AppendInt(dst, h.CkQueueOffset, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, h.PopTime, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, h.InvisibleTime, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(h.ReviveQueueID), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(h.RetryFlag), 10)
	dst = append(dst, ' ')
	dst = append(dst, h.BrokerName...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(h.QueueID), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, h.QueueOffset, 10)
	if h.CommitLogOffset != -1 {
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, h.CommitLogOffset, 10)
	}
	return dst
}

// String is the extraInfo / receipt-handle text.
func (h *ReceiptHandle) String() string { return string(h.AppendExtraInfo(make([]byte, 0, 64))) }

var handleFields = [...]string{"ckQueueOffset", "popTime", "invisibleTime", "reviveQid", "retryFlag", "brokerName", "queueId", "msgQueueOffset", "commitLogOffset"}

// ParseReceiptHandle decodes a receipt handle exactly as RocketMQ's
// ReceiptHandle.decode does: the text is split at single spaces as Java's
// String.split does (trailing empty fields dropped, empty fields inside
// kept), it needs at least 8 fields, fields 1-3 and 8 (and 9, when
// present) are Java longs and fields 4 and 7 Java ints (Long.parseLong and
// Integer.parseInt: an optional sign, then decimal digits, any count,
// within the type's range), field 5 is any text (see RetryFlag), field 6
// any text (an empty brokerName too), and fields past the ninth are
// ignored. It never panics: malformed input returns an error wrapping
// ErrMalformedHandle that names the field and what is allowed.
func ParseReceiptHandle(s string) (ReceiptHandle, error) {
	var h ReceiptHandle
	err := ParseReceiptHandleInto(s, &h)
	return h, err
}

// ParseReceiptHandleInto is ParseReceiptHandle writing into h, for hot
// paths (ack, changeInvisibleTime, the checker). What clients normally
// send back (8 or 9 fields separated by single spaces, every number 1 to
// 18 plain decimal digits and within its field's range, retryFlag one
// digit) is decoded in one pass without allocating. Anything else goes to
// the careful field-by-field decoder, so the result and the error text are
// always exactly its.
func ParseReceiptHandleInto(s string, h *ReceiptHandle) error {
	if parseHandleFast(s, h) {
		return nil
	}
	var err error
	*h, err = parseHandleCareful(s)
	return err
}

// parseHandleFast decodes a well-formed handle into h, or reports false
// (h is then garbage). Every handle it accepts is one parseHandleCareful
// accepts with the same result.
func parseHandleFast(s string, h *ReceiptHandle) bool {
	var v [9]int64
	n, i := 0, 0
	for {
		j := i
		if n == 5 {
			for j < len(s) && s[j] != ' ' {
				j++
			}
			h.BrokerName = s[i:j]
		} else {
			var x int64
			for ; j < len(s); j++ {
				c := s[j] - '0'
				if c > 9 {
					break
				}
				x = x*10 + int64(c)
			}
			if j-i > 18 || j < len(s) && s[j] != ' ' || n == 4 && j-i != 1 {
				return false // too long to be exact, not a digit, or a retryFlag the careful decoder reads as text
			}
			v[n] = x
		}
		if j == i {
			return false // empty field
		}
		n++
		if j == len(s) {
			break
		}
		if n == 9 {
			return false // a tenth field
		}
		i = j + 1
	}
	const maxInt32 = 1<<31 - 1
	if n < 8 || v[3] > maxInt32 || v[6] > maxInt32 {
		return false
	}
	h.CkQueueOffset, h.PopTime, h.InvisibleTime, h.ReviveQueueID = v[0], v[1], v[2], int32(v[3])
	h.RetryFlag, h.QueueID, h.QueueOffset, h.CommitLogOffset = retryFlagText(v[4]), int32(v[6]), v[7], -1
	if n == 9 {
		h.CommitLogOffset = v[8]
	}
	return true
}

// retryFlagText is the retry flag of a one-digit field 5.
func retryFlagText(d int64) RetryType {
	if d == 1 || d == 2 {
		return RetryType(d)
	}
	return NormalTopic
}

// parseHandleCareful is the reference decoder: ReceiptHandle.decode, field
// by field, with an error naming the field and what is allowed.
func parseHandleCareful(s string) (ReceiptHandle, error) {
	h := ReceiptHandle{CommitLogOffset: -1}
	fields := JavaSplit(s, ' ')
	if len(fields) < 8 {
		return h, handleErr(s, fmt.Sprintf("has %d fields: want at least 8 (ckQueueOffset popTime invisibleTime reviveQid retryFlag brokerName queueId msgQueueOffset, then commitLogOffset)", len(fields)))
	}
	for i, f := range fields[:min(len(fields), 9)] {
		if err := h.setField(i, f); err != nil {
			return h, handleErr(s, err.Error())
		}
	}
	return h, nil
}

func handleErr(s, why string) error {
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return fmt.Errorf("%w %q: %s", ErrMalformedHandle, s, why)
}

func (h *ReceiptHandle) setField(i int, f string) error {
	switch i {
	case 4:
		switch f {
		case "1":
			h.RetryFlag = RetryTopicV1Type
		case "2":
			h.RetryFlag = RetryTopicV2Type
		default:
			h.RetryFlag = NormalTopic
		}
		return nil
	case 5:
		h.BrokerName = f
		return nil
	case 3, 6:
		v, ok := ParseJavaInt(f)
		if !ok {
			return fmt.Errorf("field %d (%s) is %q: want a Java int (an optional sign and decimal digits, -2147483648..2147483647)", i+1, handleFields[i], f)
		}
		if i == 3 {
			h.ReviveQueueID = v
		} else {
			h.QueueID = v
		}
		return nil
	}
	v, ok := ParseJavaLong(f)
	if !ok {
		return fmt.Errorf("field %d (%s) is %q: want a Java long (an optional sign and decimal digits, -9223372036854775808..9223372036854775807)", i+1, handleFields[i], f)
	}
	switch i {
	case 0:
		h.CkQueueOffset = v
	case 1:
		h.PopTime = v
	case 2:
		h.InvisibleTime = v
	case 7:
		h.QueueOffset = v
	case 8:
		h.CommitLogOffset = v
	}
	return nil
}
