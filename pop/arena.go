package pop

import "unsafe"

// reviveArena allocates what the engine keeps beside its CK and ack
// messages many at a time: the CKs' offset lists and the strings of merge
// keys. They are written once, never change, and live about as long as
// the message, so carving them out of shared blocks costs no more memory
// than allocating them one by one, and saves the allocator and the
// collector an object each. Each list gets its own capacity-limited
// window: an append beyond it reallocates, as it would have.
type reviveArena struct {
	diffs []int32 // CKs' QueueOffsetDiff, kept as long as their CK message
	strs  strArena
}

const (
	arenaDiffs = 1024
	arenaStrs  = 16 << 10
)

// int32s returns a zeroed list of n (a CK's QueueOffsetDiff), with no
// room beyond it.
func (a *reviveArena) int32s(n int) []int32 {
	if n > arenaDiffs/8 {
		return make([]int32, n)
	}
	if len(a.diffs) < n {
		a.diffs = make([]int32, arenaDiffs)
	}
	d := a.diffs[:n:n]
	a.diffs = a.diffs[n:]
	return d
}

// strArena makes strings side by side in shared blocks of bytes: the
// merge keys the engine keeps beside its CKs and acks, which live about
// as long as one another and are never written to. A block is a byte
// slice that is only ever appended to within its capacity: the strings
// cut from it stay as they were made while later ones are written after
// them. A block holds no pointers, so the collector does not scan it,
// and it goes once none of its strings is referenced. (A
// strings.Builder, which does the same, cost ~60 instructions a string
// more in its checks and calls: 61 k merge keys in the default run.)
type strArena struct {
	block []byte // the current block: its length is the part in use
}

// str returns b as a string carved from the current block.
func (a *strArena) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	n := len(a.block)
	if cap(a.block)-n < len(b) {
		if len(b) > arenaStrs/8 {
			return string(b)
		}
		a.block, n = make([]byte, 0, arenaStrs), 0 // the old block stays with the strings made from it
	}
	a.block = a.block[:n+len(b)]
	s := a.block[n:]
	copy(s, b)
	return unsafe.String(&s[0], len(s))
}
