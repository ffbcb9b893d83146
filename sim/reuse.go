package sim

import (
	"popsim/pop"
	"popsim/sim/check"
)

// Reuse carries a finished run's largest buffers to the next run made with
// the same Reuse (RunOptions.Reuse): the RocketMQ brokers' log chunks (the
// stored messages, a third of a default run's allocation, with the chunks
// their pools of released ones held) and, on the checkpoint path, every
// slab of CK and ack bodies, acks, buffer wrappers, merge keys, merge-key
// table entries and slots and revive-round table slots they made, and
// their timers' slots, ref-index blocks and revive rounds' storage
// (pop.Spare: over two thirds of what a warm default run allocated
// before), the checker's history chunks (a sixth) and the meter's
// histogram counts, record blocks and window chunks (a tenth). A process
// that makes many runs one after another (popbench's SimRun cases)
// otherwise has the runtime return each finished run's pages to the system
// for the next run to fault back in, and the collector runs more often
// while the new run's heap grows from nothing (at GOGC 100 three times a
// default run, against under one with a Reuse). What a run takes from a
// Reuse is cleared (log chunks, slabs, timer slots, ref and revive
// storage, the meter's arrays) or written before it is read (history
// chunks), so it changes no trace: a seed gives the same trace and summary
// with or without one. A Reuse holds at most about what the largest run
// made with it held at its end, with the slabs whose records all died
// (a broker given a Reuse keeps up to 16 MB of each kind of slab it made
// until then, pop.Spare; a longer run's further slabs go as they would
// without one, so its memory still follows what is in flight). It is for one
// goroutine: runs made concurrently need one each. The zero value is ready
// to use.
type Reuse struct {
	logs    pop.Spare
	history check.ChunkSpare
	meter   meterSpare
}

// useReuse hands the run's checker and meter their spare buffers (its
// brokers take theirs, log chunks and slabs, as they are made:
// newRocketMQ).
func (s *sim) useReuse() {
	if r := s.opts.Reuse; r != nil {
		s.chk.UseSpare(&r.history)
		s.meter.useSpare(&r.meter)
	}
}

// recycle gives the finished run's log chunks and slabs, history chunks
// and meter arrays to its Reuse: the run must not be used afterwards.
func (s *sim) recycle() {
	r := s.opts.Reuse
	if r == nil {
		return
	}
	switch a := s.eng.(type) {
	case *rocketMQ:
		a.b.Recycle(&r.logs)
	case *rocketCluster:
		for _, b := range a.bs {
			b.b.Recycle(&r.logs)
		}
	}
	s.chk.Recycle(&r.history)
	s.meter.recycle(&r.meter)
}
