package model

import (
	"fmt"
	"strconv"
	"strings"

	"popsim/clock"
)

// The text form of an event is one line:
//
//	<seq> <time> <kind> c=<client> [key=value ...]
//
// Time (and a deadline, dl=) is in seconds since clock.Epoch with six
// decimals, which is the run's start unless a run chose another one.
// A field is printed only when it is set: Client always, Queue and Offset
// whenever Topic is, every other field when it is not zero. Keys, in
// order: c (client), g (group), m (message id), l (lease), ended, next,
// t/q/o (topic, queue, offset), a (attempt), dl (deadline), span (a
// duration such as 30s), code, n (count), r (reason), shown. ParseEvent
// reads the form back, so a saved trace can be checked again offline.

// AppendText appends the event's text form (no newline).
func (e *Event) AppendText(b []byte) []byte {
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, ' ')
	b = appendSeconds(b, e.At)
	b = append(b, ' ')
	b = append(b, e.Kind.String()...)
	b = appendInt(b, " c=", int64(e.Client))
	b = appendStr(b, " g=", e.Group)
	b = appendNonZero(b, " m=", uint64(e.Msg))
	b = appendNonZero(b, " l=", uint64(e.Lease))
	b = appendNonZero(b, " ended=", uint64(e.Ended))
	b = appendNonZero(b, " next=", uint64(e.Next))
	if e.Topic != "" {
		b = appendStr(b, " t=", e.Topic)
		b = appendInt(b, " q=", int64(e.Queue))
		b = appendInt(b, " o=", e.Offset)
	}
	if e.Attempt != 0 {
		b = appendInt(b, " a=", int64(e.Attempt))
	}
	if e.Deadline != 0 {
		b = append(b, " dl="...)
		b = appendSeconds(b, e.Deadline)
	}
	if e.Span != 0 {
		b = append(b, " span="...)
		b = append(b, e.Span.String()...)
	}
	if e.Code != 0 {
		b = appendInt(b, " code=", int64(e.Code))
	}
	if e.Count != 0 {
		b = appendInt(b, " n=", int64(e.Count))
	}
	if e.Reason != RNone {
		b = appendStr(b, " r=", e.Reason.String())
	}
	return appendStr(b, " shown=", e.Shown)
}

// String is the text form.
func (e *Event) String() string { return string(e.AppendText(nil)) }

func appendInt(b []byte, key string, v int64) []byte {
	b = append(b, key...)
	return strconv.AppendInt(b, v, 10)
}

func appendNonZero(b []byte, key string, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = append(b, key...)
	return strconv.AppendUint(b, v, 10)
}

func appendStr(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, key...)
	return append(b, v...)
}

// appendSeconds writes t - Epoch as seconds with exactly six decimals.
func appendSeconds(b []byte, t clock.Time) []byte {
	d := int64(t - clock.Epoch)
	if d < 0 {
		b = append(b, '-')
		d = -d
	}
	b = strconv.AppendInt(b, d/int64(clock.Second), 10)
	b = append(b, '.')
	frac := d % int64(clock.Second)
	for div := int64(100000); div > 0; div /= 10 {
		b = append(b, byte('0'+frac/div%10))
	}
	return b
}

// ParseEvent reads one line of the text form. Errors name the field.
func ParseEvent(line string) (Event, error) {
	var e Event
	f := strings.Fields(line)
	if len(f) < 4 {
		return e, fmt.Errorf("trace line %q: want <seq> <time> <kind> c=<client> ...", line)
	}
	var err error
	if e.Seq, err = strconv.ParseInt(f[0], 10, 64); err != nil {
		return e, fmt.Errorf("trace line %q: seq %q: want an integer", line, f[0])
	}
	if e.At, err = parseSeconds(f[1]); err != nil {
		return e, fmt.Errorf("trace line %q: time: %v", line, err)
	}
	k, ok := ParseEventKind(f[2])
	if !ok || k == EvNone {
		return e, fmt.Errorf("trace line %q: unknown event kind %q", line, f[2])
	}
	e.Kind = k
	seen := map[string]bool{}
	for _, kv := range f[3:] {
		key, val, ok := strings.Cut(kv, "=")
		if !ok || val == "" {
			return e, fmt.Errorf("trace line %q: field %q: want key=value", line, kv)
		}
		if seen[key] {
			return e, fmt.Errorf("trace line %q: field %s twice", line, key)
		}
		seen[key] = true
		if err := e.setField(key, val); err != nil {
			return e, fmt.Errorf("trace line %q: %s=%s: %v", line, key, val, err)
		}
	}
	if !seen["c"] {
		return e, fmt.Errorf("trace line %q: no client (c=)", line)
	}
	if (seen["q"] || seen["o"]) && !seen["t"] {
		return e, fmt.Errorf("trace line %q: a queue or offset without a topic (t=)", line)
	}
	return e, nil
}

func (e *Event) setField(key, val string) error {
	var err error
	switch key {
	case "c":
		e.Client, err = parseInt32(val)
	case "g":
		e.Group = val
	case "m":
		var v uint64
		v, err = strconv.ParseUint(val, 10, 32)
		e.Msg = MsgID(v)
	case "l":
		e.Lease, err = parseLease(val)
	case "ended":
		e.Ended, err = parseLease(val)
	case "next":
		e.Next, err = parseLease(val)
	case "t":
		e.Topic = val
	case "q":
		e.Queue, err = parseInt32(val)
	case "o":
		e.Offset, err = strconv.ParseInt(val, 10, 64)
	case "a":
		e.Attempt, err = parseInt32(val)
	case "dl":
		e.Deadline, err = parseSeconds(val)
		return err
	case "span":
		e.Span, err = parseSpan(val)
		return err
	case "code":
		e.Code, err = parseInt32(val)
	case "n":
		e.Count, err = parseInt32(val)
	case "r":
		r, ok := ParseReason(val)
		if !ok || r == RNone {
			return fmt.Errorf("unknown reason")
		}
		e.Reason = r
	case "shown":
		e.Shown = val
	default:
		return fmt.Errorf("unknown field")
	}
	if err != nil {
		return fmt.Errorf("not a number in range")
	}
	return nil
}

func parseLease(s string) (LeaseID, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	return LeaseID(v), err
}

func parseInt32(s string) (int32, error) {
	v, err := strconv.ParseInt(s, 10, 32)
	return int32(v), err
}

// parseSeconds reads "<sec>.<6 digits>" (optionally negative) since Epoch.
func parseSeconds(s string) (clock.Time, error) {
	neg := strings.HasPrefix(s, "-")
	sec, frac, ok := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if !ok || len(frac) != 6 {
		return 0, fmt.Errorf("%q: want seconds with six decimals, e.g. 12.000345", s)
	}
	a, err1 := strconv.ParseInt(sec, 10, 64)
	b, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || a < 0 || b < 0 || a > int64(1)<<40 {
		return 0, fmt.Errorf("%q: want seconds with six decimals, e.g. 12.000345", s)
	}
	d := a*int64(clock.Second) + b
	if neg {
		d = -d
	}
	return clock.Epoch + clock.Time(d), nil
}

// parseSpan reads clock.Duration's String form ("30s", "0.25s", "-1s").
func parseSpan(s string) (clock.Duration, error) {
	num, ok := strings.CutSuffix(s, "s")
	if !ok {
		return 0, fmt.Errorf("want seconds such as 30s or 0.25s")
	}
	neg := strings.HasPrefix(num, "-")
	sec, frac, _ := strings.Cut(strings.TrimPrefix(num, "-"), ".")
	if len(frac) > 6 {
		return 0, fmt.Errorf("want at most six decimals")
	}
	a, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || a < 0 {
		return 0, fmt.Errorf("want seconds such as 30s or 0.25s")
	}
	var b int64
	if frac != "" {
		if b, err = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64); err != nil || b < 0 {
			return 0, fmt.Errorf("want seconds such as 30s or 0.25s")
		}
	}
	d := clock.Duration(a)*clock.Second + clock.Duration(b)
	if neg {
		d = -d
	}
	return d, nil
}
