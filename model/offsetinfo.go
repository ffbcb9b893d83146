package model

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrMalformedOffsetInfo is wrapped by every offset-info parsing error.
var ErrMalformedOffsetInfo = errors.New("malformed offset info")

// OffsetInfo is one entry of a pop response's startOffsetInfo or
// msgOffsetInfo header: `retryFlag queueId startOffset` or
// `retryFlag queueId o1,o2,...`, entries joined by ';'.
type OffsetInfo struct {
	RetryFlag RetryType
	QueueID   int32
	Offsets   []int64 // one element for startOffsetInfo
}

// Key is the parser's map key `retryFlag@queueId`.
func (e OffsetInfo) Key() string {
	return strconv.Itoa(int(e.RetryFlag)) + "@" + strconv.Itoa(int(e.QueueID))
}

// AppendOffsetInfo appends one entry to an offset-info header, adding the
// ';' separator when dst is not empty.
func AppendOffsetInfo(dst []byte, e OffsetInfo) []byte {
	if len(dst) > 0 {
		dst = append(dst, ';')
	}
	dst = AppendDec(dst, int64(e.RetryFlag))
	dst = append(dst, ' ')
	dst = AppendDec(dst, int64(e.QueueID))
	dst = append(dst, ' ')
	for i, o := range e.Offsets {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendDec(dst, o)
	}
	return dst
}

// ParseStartOffsetInfo parses a startOffsetInfo header: each entry must have
// exactly one offset.
func ParseStartOffsetInfo(s string) ([]OffsetInfo, error) { return parseOffsetInfo(s, true) }

// ParseMsgOffsetInfo parses a msgOffsetInfo header.
func ParseMsgOffsetInfo(s string) ([]OffsetInfo, error) { return parseOffsetInfo(s, false) }

func parseOffsetInfo(s string, single bool) ([]OffsetInfo, error) {
	if s == "" {
		return nil, nil
	}
	var out []OffsetInfo
	seen := map[string]bool{}
	for _, ent := range strings.Split(s, ";") {
		e, err := parseOffsetEntry(ent, single)
		if err != nil {
			return nil, err
		}
		if seen[e.Key()] {
			return nil, fmt.Errorf("%w: duplicate key %s in %q", ErrMalformedOffsetInfo, e.Key(), clip(s))
		}
		seen[e.Key()] = true
		out = append(out, e)
	}
	return out, nil
}

func parseOffsetEntry(ent string, single bool) (OffsetInfo, error) {
	parts := strings.Split(ent, " ")
	if len(parts) != 3 {
		return OffsetInfo{}, fmt.Errorf("%w: entry %q has %d space-separated parts: want 3 (retryFlag queueId offsets)", ErrMalformedOffsetInfo, clip(ent), len(parts))
	}
	flag, err := strconv.Atoi(parts[0])
	if err != nil || flag < 0 || flag > 2 {
		return OffsetInfo{}, fmt.Errorf("%w: entry %q: retryFlag %q: want 0, 1 or 2", ErrMalformedOffsetInfo, clip(ent), parts[0])
	}
	qid, err := strconv.ParseInt(parts[1], 10, 32)
	if err != nil || qid < 0 {
		return OffsetInfo{}, fmt.Errorf("%w: entry %q: queueId %q: want a non-negative integer", ErrMalformedOffsetInfo, clip(ent), parts[1])
	}
	e := OffsetInfo{RetryFlag: RetryType(flag), QueueID: int32(qid)}
	for _, o := range strings.Split(parts[2], ",") {
		v, err := strconv.ParseInt(o, 10, 64)
		if err != nil || v < 0 {
			return OffsetInfo{}, fmt.Errorf("%w: entry %q: offset %q: want a non-negative integer", ErrMalformedOffsetInfo, clip(ent), o)
		}
		e.Offsets = append(e.Offsets, v)
	}
	if single && len(e.Offsets) != 1 {
		return OffsetInfo{}, fmt.Errorf("%w: startOffsetInfo entry %q has %d offsets: want exactly 1", ErrMalformedOffsetInfo, clip(ent), len(e.Offsets))
	}
	return e, nil
}

// OrderCount is one entry of the FIFO orderCountInfo header: per offset
// (`retryFlag qo<queueId>%<offset> count`, Offset >= 0) or per queue
// (`retryFlag queueId minCount`, Offset == -1).
type OrderCount struct {
	RetryFlag RetryType
	QueueID   int32
	Offset    int64
	Count     int32
}

// Key is the parser's map key: `retryFlag@qo<qid>%<offset>` or `retryFlag@qid`.
func (e OrderCount) Key() string {
	f := strconv.Itoa(int(e.RetryFlag)) + "@"
	if e.Offset >= 0 {
		return f + "qo" + strconv.Itoa(int(e.QueueID)) + "%" + strconv.FormatInt(e.Offset, 10)
	}
	return f + strconv.Itoa(int(e.QueueID))
}

// AppendOrderCount appends one orderCountInfo entry, adding the ';'
// separator when dst is not empty.
func AppendOrderCount(dst []byte, e OrderCount) []byte {
	if len(dst) > 0 {
		dst = append(dst, ';')
	}
	return AppendOrderCountEntry(dst, e)
}

// AppendOrderCountEntry appends one orderCountInfo entry without a
// separator.
func AppendOrderCountEntry(dst []byte, e OrderCount) []byte {
	dst = strconv.AppendInt(dst, int64(e.RetryFlag), 10)
	dst = append(dst, ' ')
	if e.Offset >= 0 {
		dst = append(dst, "qo"...)
		dst = strconv.AppendInt(dst, int64(e.QueueID), 10)
		dst = append(dst, '%')
		dst = strconv.AppendInt(dst, e.Offset, 10)
	} else {
		dst = strconv.AppendInt(dst, int64(e.QueueID), 10)
	}
	dst = append(dst, ' ')
	return strconv.AppendInt(dst, int64(e.Count), 10)
}

// ParseOrderCountInfo parses an orderCountInfo header.
func ParseOrderCountInfo(s string) ([]OrderCount, error) {
	if s == "" {
		return nil, nil
	}
	var out []OrderCount
	seen := map[string]bool{}
	for _, ent := range strings.Split(s, ";") {
		e, err := parseOrderCount(ent)
		if err != nil {
			return nil, err
		}
		if seen[e.Key()] {
			return nil, fmt.Errorf("%w: duplicate key %s in %q", ErrMalformedOffsetInfo, e.Key(), clip(s))
		}
		seen[e.Key()] = true
		out = append(out, e)
	}
	return out, nil
}

func parseOrderCount(ent string) (OrderCount, error) {
	parts := strings.Split(ent, " ")
	if len(parts) != 3 {
		return OrderCount{}, fmt.Errorf("%w: orderCountInfo entry %q has %d parts: want 3", ErrMalformedOffsetInfo, clip(ent), len(parts))
	}
	flag, err1 := strconv.Atoi(parts[0])
	count, err2 := strconv.ParseInt(parts[2], 10, 32)
	if err1 != nil || flag < 0 || flag > 2 || err2 != nil || count < 0 {
		return OrderCount{}, fmt.Errorf("%w: orderCountInfo entry %q: want `retryFlag(0-2) queue count(>=0)`", ErrMalformedOffsetInfo, clip(ent))
	}
	e := OrderCount{RetryFlag: RetryType(flag), Offset: -1, Count: int32(count)}
	q := parts[1]
	if strings.HasPrefix(q, "qo") {
		i := strings.IndexByte(q, '%')
		if i < 0 {
			return OrderCount{}, fmt.Errorf("%w: orderCountInfo entry %q: want qo<queueId>%%<offset>", ErrMalformedOffsetInfo, clip(ent))
		}
		off, err := strconv.ParseInt(q[i+1:], 10, 64)
		if err != nil || off < 0 {
			return OrderCount{}, fmt.Errorf("%w: orderCountInfo entry %q: offset %q: want a non-negative integer", ErrMalformedOffsetInfo, clip(ent), q[i+1:])
		}
		e.Offset, q = off, q[2:i]
	}
	qid, err := strconv.ParseInt(q, 10, 32)
	if err != nil || qid < 0 {
		return OrderCount{}, fmt.Errorf("%w: orderCountInfo entry %q: queueId %q: want a non-negative integer", ErrMalformedOffsetInfo, clip(ent), q)
	}
	e.QueueID = int32(qid)
	return e, nil
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}
