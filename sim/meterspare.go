package sim

// meterSpare is the meter's largest arrays from a finished run, for the
// next run given the same Reuse: its histograms' 32-bit counts, its
// records' live blocks and its window's chunks. Each is cleared when
// taken (newCounts, obsStore.grow, msgWindow.extend), as a new one is
// zero.
type meterSpare struct {
	counts []*[histSlots]int32
	obs    []*[obsBlock]meterObs
	msgs   []*[msgChunk]meterMsg
}

// takeSpare returns the last of *from, not cleared, and drops it from
// *from; nil when *from is empty (or from is nil: no Reuse).
func takeSpare[T any](from *[]*T) *T {
	if from == nil || len(*from) == 0 {
		return nil
	}
	s := *from
	x := s[len(s)-1]
	s[len(s)-1] = nil
	*from = s[:len(s)-1]
	return x
}

// newCounts is an empty hist whose counts come from the run's Reuse when
// it has some.
func (m *meter) newCounts() *hist {
	if m.spare != nil {
		if c := takeSpare(&m.spare.counts); c != nil {
			clear(c[:])
			return &hist{counts: c}
		}
	}
	return newHistCounts()
}

// useSpare makes the meter take its arrays from sp before allocating.
func (m *meter) useSpare(sp *meterSpare) {
	m.spare, m.obs.more, m.msgs.more = sp, &sp.obs, &sp.msgs
}

// recycle adds the meter's arrays to sp: the meter must not be used
// afterwards. The revive lag's counts stay: newMeter makes them, before
// the meter has sp, and a run would leave sp one more each time.
func (m *meter) recycle(sp *meterSpare) {
	a := &m.agg
	for _, h := range append([]*hist{m.redeliver, a.e2eH, a.svcH}, a.partH[:]...) {
		sp.putCounts(h)
	}
	for _, g := range a.groups {
		sp.putCounts(g.e2e)
		sp.putCounts(g.svc)
	}
	for _, b := range m.obs.blocks {
		if b != nil {
			sp.obs = append(sp.obs, b)
		}
	}
	if m.obs.spare != nil {
		sp.obs = append(sp.obs, m.obs.spare)
	}
	sp.msgs = append(append(sp.msgs, m.msgs.chunks...), m.msgs.spare...)
	m.obs.blocks, m.obs.spare, m.msgs.chunks, m.msgs.spare = nil, nil, nil, nil
}

// putCounts keeps h's 32-bit counts (h may be nil).
func (sp *meterSpare) putCounts(h *hist) {
	if h != nil && h.counts != nil {
		sp.counts = append(sp.counts, h.counts)
		h.counts = nil
	}
}
