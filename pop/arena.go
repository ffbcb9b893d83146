package pop

import (
	"strings"

	"popsim/model"
)

// reviveArena allocates what the engine's revive-topic messages are made
// of many at a time: their property lists and their JSON bodies. A
// revive-topic message is written once, never changes, and is kept as
// long as its queue keeps it, so carving its parts out of shared blocks
// costs no more memory than allocating them one by one, and saves the
// allocator and the collector two objects per message. Each part gets its
// own capacity-limited window: an append beyond it reallocates, as it
// would have.
type reviveArena struct {
	props []model.Property
	bytes []byte
	diffs []int32 // CKs' QueueOffsetDiff, kept as long as their CK message
	strs  strArena
}

const (
	arenaProps = 512
	arenaBytes = 32 << 10
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

// propList returns an empty property list with room for n.
func (a *reviveArena) propList(n int) []model.Property {
	if len(a.props) < n {
		a.props = make([]model.Property, arenaProps)
	}
	p := a.props[:0:n]
	a.props = a.props[n:]
	return p
}

// body returns an empty byte slice with room for n, to be passed to used
// once written, before the next body.
func (a *reviveArena) body(n int) []byte {
	if len(a.bytes) < n {
		if n > arenaBytes/4 {
			return make([]byte, 0, n)
		}
		a.bytes = make([]byte, arenaBytes)
	}
	return a.bytes[:0:n]
}

// used takes b, written into a window from body, as final: its bytes
// leave the block, and it is returned with no room beyond them, so that
// no append to it can write into the next body. A b that outgrew its
// window lives elsewhere and takes nothing.
func (a *reviveArena) used(b []byte) []byte {
	if len(b) > 0 && len(a.bytes) > 0 && &b[0] == &a.bytes[0] {
		a.bytes = a.bytes[len(b):]
	}
	return b[:len(b):len(b)]
}

// strArena makes strings side by side in shared blocks of bytes: the
// strings of a revive-topic message (its unique id, deliver time and
// lease) and the merge keys the engine keeps beside its CKs and acks,
// which live about as long as one another and are never written to. A
// block is a strings.Builder that is only ever appended to within the
// room it was grown to: the strings cut from it stay as they were made
// while later ones are written after them. A block holds no pointers, so
// the collector does not scan it, and it goes once none of its strings
// is referenced.
type strArena struct {
	sb strings.Builder
}

// str returns b as a string carved from the current block.
func (a *strArena) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if a.sb.Cap()-a.sb.Len() < len(b) {
		if len(b) > arenaStrs/8 {
			return string(b)
		}
		a.sb.Reset() // the old block stays with the strings made from it
		a.sb.Grow(arenaStrs)
	}
	n := a.sb.Len()
	a.sb.Write(b)
	return a.sb.String()[n:]
}
