package check

import "popsim/model"

// handleSlots is the size of the parsed-handle cache (a power of two). A
// lease's handle is named by its delivery and then by the consume, ack and
// renew events that follow within a short while; a handle pushed out by a
// newer one that hashes to its slot simply parses again.
const handleSlots = 1 << 12

// handleCache parses each receipt handle about once per delivery instead
// of once per event that names it. It is direct-mapped on a hash of the
// handle's tail (where the queue and commit-log offsets are), and a hit
// needs the whole string to be equal. Only handles that parse are kept; a
// miss or a malformed handle goes to model.ParseReceiptHandle, so the
// result is always exactly the parser's.
type handleCache struct {
	slots []handleSlot
}

type handleSlot struct {
	key string
	h   model.ReceiptHandle
}

func (hc *handleCache) parse(s string) (model.ReceiptHandle, error) {
	if hc.slots == nil {
		hc.slots = make([]handleSlot, handleSlots)
	}
	sl := &hc.slots[tailHash(s)&(handleSlots-1)]
	if sl.key == s && s != "" {
		return sl.h, nil
	}
	h, ok := fastHandle(s)
	if !ok {
		var err error
		if h, err = model.ParseReceiptHandle(s); err != nil {
			return h, err
		}
	}
	sl.key, sl.h = s, h
	return h, nil
}

// fastHandle decodes the common shape of a handle: 8 or 9 space-separated
// fields, every number 1 to 18 plain decimal digits (so non-negative and
// without overflow) and within its field's range, the broker name not
// empty. Every such handle is one model.ParseReceiptHandle accepts with
// the same result; anything else (a sign, an empty field, a value out of
// range) reports !ok and goes to the parser.
func fastHandle(s string) (model.ReceiptHandle, bool) {
	h := model.ReceiptHandle{CommitLogOffset: -1}
	n := 0
	for start := 0; start <= len(s); n++ {
		end := start
		for end < len(s) && s[end] != ' ' {
			end++
		}
		if n >= 9 || !setFast(&h, n, s[start:end]) {
			return h, false
		}
		start = end + 1
	}
	return h, n >= 8
}

// tailHash is FNV-1a over the last 16 bytes of s.
func tailHash(s string) uint32 {
	x := uint32(2166136261)
	for i := max(0, len(s)-16); i < len(s); i++ {
		x = (x ^ uint32(s[i])) * 16777619
	}
	return x ^ x>>16
}

// digits is f as a number when f is 1 to 18 decimal digits.
func digits(f string) (int64, bool) {
	if len(f) == 0 || len(f) > 18 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(f); i++ {
		d := f[i] - '0'
		if d > 9 {
			return 0, false
		}
		v = v*10 + int64(d)
	}
	return v, true
}

// setFast sets field i of h from f, or reports false where
// model.ParseReceiptHandle might decide otherwise.
func setFast(h *model.ReceiptHandle, i int, f string) bool {
	if i == 5 {
		h.BrokerName = f
		return f != ""
	}
	v, ok := digits(f)
	if !ok {
		return false
	}
	switch i {
	case 0:
		h.CkQueueOffset = v
	case 1:
		h.PopTime = v
	case 2:
		h.InvisibleTime = v
	case 3:
		h.ReviveQueueID = int32(v)
		return v <= 1<<31-1
	case 4:
		h.RetryFlag = model.RetryType(v)
		return v <= 2
	case 6:
		h.QueueID = int32(v)
		return v <= 1<<31-1
	case 7:
		h.QueueOffset = v
	case 8:
		h.CommitLogOffset = v
	}
	return true
}
