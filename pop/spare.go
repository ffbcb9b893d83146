package pop

import (
	"unsafe"

	"popsim/model"
)

// Spare carries a finished broker's largest allocations to another
// broker's life, so that a process making many runs one after another (a
// benchmark, a sweep's worker) keeps a run's records in the memory of the
// last run's instead of allocating them anew: the runtime otherwise
// returns a finished run's pages to the system and the next run faults
// them back in, and the collector runs more often as the new run's heap
// grows from nothing. It holds full-size log chunks (the queues' and the
// pool's of released ones) and the checkpoint path's slabs: CK and ack
// bodies, the acks' own fields, buffer wrappers, merge keys held apart
// from the table, the merge-key table's entries and every slot array it
// grew through and the revive rounds' tables' (slabSource), the
// timer's slots, the blocks of the index of CK refs and the revive
// services' round storage. Everything in a Spare is cleared, as a new allocation is (a log
// chunk as a pooled one is: poisoned with the invariants build tag), so
// nothing of the broker that held it can reach another; which chunk or
// slab a broker gets changes no answer it gives. A Spare is for one
// goroutine's brokers at a time.
type Spare struct {
	chunks     [][]model.Message
	ckBodies   [][]ckBody
	ackBodies  [][]ackBody
	ackMsgs    [][]model.AckMsg
	wrappers   [][]wrapper
	keys       [][]mkKey
	mkEntries  [][]mkEntry
	mkSlots    [][]uint64
	roundSlots [][]roundSlot
	// timerSlots are the timer's slots (timerStore), each with its
	// messages' array.
	timerSlots []*timerSlot
	// refBlocks are the blocks of the index of CK refs by first lease
	// (refIndex), revive a revive service's round storage.
	refBlocks []*[refBlock]*ckRef
	revive    []reviveBufs
}

// reviveBufs is a revive service's storage for its rounds: all's and
// jour's (allBuf, jourBuf) and its roundCk chunks, each empty and cleared
// to its capacity.
type reviveBufs struct {
	all    []*roundCk
	jour   []revEnt
	chunks [][]roundCk
}

// recycleRevive adds the storage of b's revive services' rounds to s,
// and every block of its index of refs, cleared.
func (b *Broker) recycleRevive(s *Spare) {
	for _, v := range b.revivers {
		r := reviveBufs{all: clearedToCap(v.allBuf), jour: clearedToCap(v.jourBuf)}
		for _, c := range append(v.chunks, v.free...) {
			r.chunks = append(r.chunks, clearedToCap(c))
		}
		s.revive = append(s.revive, r)
	}
	x := &b.ckl.byFirst
	for _, bl := range append(x.blocks, x.spare) {
		if bl != nil {
			clear(bl[:])
			s.refBlocks = append(s.refBlocks, bl)
		}
	}
	b.revivers, x.blocks, x.spare = nil, nil, nil
}

// takeLast removes the last element of *sp and returns it; ok is false
// when sp is nil or empty. The Spare's lists are taken from their ends.
func takeLast[T any](sp *[]T) (x T, ok bool) {
	if sp == nil || len(*sp) == 0 {
		return x, false
	}
	s := *sp
	x = s[len(s)-1]
	var zero T
	s[len(s)-1] = zero
	*sp = s[:len(s)-1]
	return x, true
}

// clearedToCap is x emptied, its room cleared.
func clearedToCap[T any](x []T) []T {
	clear(x[:cap(x)])
	return x[:0]
}

// Len is how many log chunks s holds.
func (s *Spare) Len() int { return len(s.chunks) }

// Slabs is how many slabs s holds, of every kind.
func (s *Spare) Slabs() int {
	return len(s.ckBodies) + len(s.ackBodies) + len(s.ackMsgs) + len(s.wrappers) + len(s.keys) + len(s.mkEntries) + len(s.mkSlots) + len(s.roundSlots) + len(s.timerSlots) + len(s.refBlocks) + len(s.revive)
}

// slabSource is where a broker takes its slabs of one kind (a block of
// records carved out one at a time: newCkBody's, ackPrefill's,
// newWrapper's, ownKey's). Without a spare a slab is a new allocation,
// which goes once none of its records is referenced. With one (UseSpare)
// it comes from the spare when it has one, and the broker keeps the slabs
// it took, up to slabKeep bytes of the kind, until Recycle hands them,
// cleared, to the spare: they stay allocated for the run (a run's slabs
// are about twice what it holds at its end: acks and wrappers die young),
// to be used again by the next run rather than faulted in anew. A slab
// past slabKeep is an ordinary allocation.
type slabSource[T any] struct {
	spare *[][]T // the Spare's slabs of this kind; nil without one
	made  [][]T  // the slabs taken since UseSpare and kept for Recycle
	kept  int    // their bytes
}

// slabKeep bounds the bytes of one kind's slabs a broker keeps for its
// Spare. A 60-second checkpoint-path run (sim.DefaultConfig) takes 13.9
// MB of CK bodies, its largest kind; a long run's slabs add up with every
// message it pops and acks (an hour at 10 000 messages a second would be
// gigabytes), which keeping them all would hold to the run's end, where
// without a Spare the collector frees each slab once its records are
// gone.
const slabKeep = 16 << 20

// take returns a zeroed slab of n records: the last spare one of that
// size (slabs of a kind are all one size, but for a table's growing
// slot arrays), else a new one.
func (s *slabSource[T]) take(n int) []T {
	if s.spare == nil {
		return make([]T, n)
	}
	var x []T
	sp := *s.spare
	for k := len(sp) - 1; k >= 0; k-- {
		if cap(sp[k]) == n { // moved to the end, and taken from there
			last := len(sp) - 1
			sp[k], sp[last] = sp[last], sp[k]
			x, _ = takeLast(s.spare)
			x = x[:n]
			break
		}
	}
	if x == nil {
		x = make([]T, n)
	}
	if sz := n * int(unsafe.Sizeof(x[0])); s.kept+sz <= slabKeep {
		s.kept += sz
		s.made = append(s.made, x)
	}
	return x
}

// recycle clears every slab s made and adds it to its spare.
func (s *slabSource[T]) recycle() {
	for i, x := range s.made {
		x = x[:cap(x)]
		clear(x)
		*s.spare = append(*s.spare, x)
		s.made[i] = nil
	}
	s.made, s.kept = nil, 0
}

// slabSources are a broker's slabSource of each kind.
type slabSources struct {
	ckBodies  slabSource[ckBody]
	ackBodies slabSource[ackBody]
	ackMsgs   slabSource[model.AckMsg]
	wrappers  slabSource[wrapper]
	keys      slabSource[mkKey]
	mk        mkSources // the merge-key table's (mkTable.src)
	// roundSlots are the revive rounds' tables' slot arrays
	// (roundTable.src).
	roundSlots slabSource[roundSlot]
}

// UseSpare makes s the place b takes a new log chunk from once its own
// pool of released chunks is empty, and its slabs from, before allocating
// one.
func (b *Broker) UseSpare(s *Spare) {
	b.logPool.spare = s
	b.slabs.ckBodies.spare = &s.ckBodies
	b.slabs.ackBodies.spare = &s.ackBodies
	b.slabs.ackMsgs.spare = &s.ackMsgs
	b.slabs.wrappers.spare = &s.wrappers
	b.slabs.keys.spare = &s.keys
	b.slabs.mk.entries.spare = &s.mkEntries
	b.slabs.mk.slots.spare = &s.mkSlots
	b.slabs.roundSlots.spare = &s.roundSlots
	b.timer.spare = &s.timerSlots
	b.ckl.byFirst.more = &s.refBlocks
	b.reviveSpare = &s.revive
}

// Recycle clears every full-size chunk b's queues hold and adds it to s
// with the chunks of b's pool of released ones, leaving the queues empty,
// and adds to s every slab b took since UseSpare(s), every slot of its
// timer, the blocks of its index of CK refs and its revive services'
// round storage, cleared: b must not be used afterwards. Chunks and slabs from s that b never took stay
// where they are (s keeps them), so s holds at most what b held and what
// it held before.
func (b *Broker) Recycle(s *Spare) {
	for _, name := range b.topicOrder {
		for _, q := range b.topics[name].queues {
			for k, c := range q.log.chunks {
				if cap(c) == logChunk {
					clear(c) // held at full length: every entry, written or not
					s.chunks = append(s.chunks, poisoned(c[:logChunk]))
				}
				q.log.chunks[k] = nil
			}
			q.log, q.revs = msgLog{}, revWindow{}
		}
	}
	s.chunks = append(s.chunks, b.logPool.free...) // cleared (poisoned) as the pool keeps them
	b.logPool = chunkPool{}
	if b.slabs.ckBodies.spare == &s.ckBodies {
		b.slabs.ckBodies.recycle()
		b.slabs.ackBodies.recycle()
		b.slabs.ackMsgs.recycle()
		b.slabs.wrappers.recycle()
		b.slabs.keys.recycle()
		b.slabs.mk.entries.recycle()
		b.slabs.mk.slots.recycle()
		b.slabs.roundSlots.recycle()
	}
	b.timer.recycle(&s.timerSlots)
	b.recycleRevive(s)
	b.slabs = slabSources{}
}

// poisoned returns c, a full-size chunk whose entries are zero, as a pool
// keeps it: with the invariants build tag every entry is poisonMsg, which
// take checks is intact; else as it is.
func poisoned(c []model.Message) []model.Message {
	if invariants {
		for i := range c {
			c[i] = poisonMsg
		}
	}
	return c
}
