package model

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrMalformedHandle is wrapped by every receipt-handle decoding error.
var ErrMalformedHandle = errors.New("malformed receipt handle")

// ReceiptHandle is the decoded extraInfo string (message property POP_CK):
//
//	ckQueueOffset popTime invisibleTime reviveQid retryFlag brokerName queueId msgQueueOffset [commitLogOffset]
//
// The proxy's receipt handle is the same string with the ninth field;
// CommitLogOffset is -1 when it is absent. Times are epoch milliseconds.
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
// commitLogOffset field when it is >= 0 (the proxy form).
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
	if h.CommitLogOffset >= 0 {
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, h.CommitLogOffset, 10)
	}
	return dst
}

// String is the extraInfo / receipt-handle text.
func (h *ReceiptHandle) String() string { return string(h.AppendExtraInfo(make([]byte, 0, 64))) }

var handleFields = [...]string{"ckQueueOffset", "popTime", "invisibleTime", "reviveQid", "retryFlag", "brokerName", "queueId", "msgQueueOffset", "commitLogOffset"}

// ParseReceiptHandle decodes an 8- or 9-field extraInfo / receipt handle.
// It never panics: malformed input returns an error wrapping
// ErrMalformedHandle that names the field and what is allowed.
func ParseReceiptHandle(s string) (ReceiptHandle, error) {
	var h ReceiptHandle
	err := ParseReceiptHandleInto(s, &h)
	return h, err
}

// ParseReceiptHandleInto is ParseReceiptHandle writing into h, for hot
// paths (ack, changeInvisibleTime, the checker). What clients normally
// send back (8 or 9 fields separated by single spaces, every number 1 to
// 18 plain decimal digits and within its field's range) is decoded in one
// pass without allocating. Anything else (a sign, an empty or a tenth
// field, an out-of-range value) goes to the careful field-by-field parser,
// so the result and the error text are always exactly its.
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
			if j-i > 18 || j < len(s) && s[j] != ' ' {
				return false // too long to be exact, or not a digit
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
	if n < 8 || v[3] > maxInt32 || v[4] > 2 || v[6] > maxInt32 {
		return false
	}
	h.CkQueueOffset, h.PopTime, h.InvisibleTime, h.ReviveQueueID = v[0], v[1], v[2], int32(v[3])
	h.RetryFlag, h.QueueID, h.QueueOffset, h.CommitLogOffset = RetryType(v[4]), int32(v[6]), v[7], -1
	if n == 9 {
		h.CommitLogOffset = v[8]
	}
	return true
}

// parseHandleCareful is the reference decoder: field by field with
// strconv, and an error naming the field and what is allowed.
func parseHandleCareful(s string) (ReceiptHandle, error) {
	h := ReceiptHandle{CommitLogOffset: -1}
	n := 0
	for rest := s; ; n++ {
		i := strings.IndexByte(rest, ' ')
		field := rest
		if i >= 0 {
			field = rest[:i]
		}
		if n >= len(handleFields) {
			return h, handleErr(s, "has more than 9 fields")
		}
		if err := h.setField(n, field); err != nil {
			return h, handleErr(s, err.Error())
		}
		if i < 0 {
			break
		}
		rest = rest[i+1:]
	}
	if n < 7 {
		return h, handleErr(s, fmt.Sprintf("has %d fields: want 8 (ckQueueOffset popTime invisibleTime reviveQid retryFlag brokerName queueId msgQueueOffset) or 9 (with commitLogOffset)", n+1))
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
	if i == 5 {
		if f == "" {
			return errors.New("field 6 (brokerName) is empty")
		}
		h.BrokerName = f
		return nil
	}
	v, err := strconv.ParseInt(f, 10, 64)
	if err != nil {
		return fmt.Errorf("field %d (%s) is %q: want a decimal integer", i+1, handleFields[i], f)
	}
	return h.setNumber(i, v)
}

func (h *ReceiptHandle) setNumber(i int, v int64) error {
	bad := func(allowed string) error {
		return fmt.Errorf("field %d (%s) is %d: want %s", i+1, handleFields[i], v, allowed)
	}
	switch i {
	case 0:
		h.CkQueueOffset = v
	case 1:
		if v < 0 {
			return bad("a non-negative epoch-millisecond time")
		}
		h.PopTime = v
	case 2:
		if v < 0 {
			return bad("a non-negative number of milliseconds")
		}
		h.InvisibleTime = v
	case 3:
		if v < 0 || v > 1<<31-1 {
			return bad("a revive queue id in [0, 2147483647]")
		}
		h.ReviveQueueID = int32(v)
	case 4:
		if v < 0 || v > 2 {
			return bad("0 (normal), 1 (retry V1) or 2 (retry V2)")
		}
		h.RetryFlag = RetryType(v)
	case 6:
		if v < 0 || v > 1<<31-1 {
			return bad("a queue id in [0, 2147483647]")
		}
		h.QueueID = int32(v)
	case 7:
		if v < 0 {
			return bad("a non-negative queue offset")
		}
		h.QueueOffset = v
	case 8:
		// -1 is "absent" and String omits it; any other negative value
		// would not survive String and parse again.
		if v < -1 {
			return bad("a commit log offset >= 0 (or -1 for none)")
		}
		h.CommitLogOffset = v
	}
	return nil
}
