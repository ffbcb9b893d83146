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
// miss goes to model.ParseReceiptHandleInto, so the result is always
// exactly the parser's.
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
	var h model.ReceiptHandle
	if err := model.ParseReceiptHandleInto(s, &h); err != nil {
		return h, err
	}
	sl.key, sl.h = s, h
	return h, nil
}

// tailHash is FNV-1a over the last 16 bytes of s.
func tailHash(s string) uint32 {
	x := uint32(2166136261)
	for i := max(0, len(s)-16); i < len(s); i++ {
		x = (x ^ uint32(s[i])) * 16777619
	}
	return x ^ x>>16
}
