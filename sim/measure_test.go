package sim

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"popsim/clock"
	"popsim/model"
	"popsim/stats"
)

// refMeasurement is what analyze made of the records before the meter
// kept its histograms as the records froze: every record read in id order
// into series and the library's histograms, once for the cut, once for
// the histograms and once for the quantiles' proportions. It is the
// reference analyze must match.
func refMeasurement(m *meter, safety clock.Duration) measurement {
	var r measurement
	e2eS, warmS, svcS := stats.NewSeries(), stats.NewSeries(), stats.NewSeries()
	var partS [nParts]*stats.Series
	parts := m.partOrder()
	for _, p := range parts {
		partS[p] = stats.NewSeries()
	}
	var measured, warm int64
	m.obs.each(func(id int64, o *meterObs) {
		switch {
		case o.flags&obsMeasured == 0:
			return
		case o.flags&obsWarm != 0:
			warm++
		default:
			e2eS.Add(id, float64(o.e2e))
			warmS.Add(id, math.Log1p(float64(o.e2e)/1000))
			measured++
		}
		if o.flags&obsStored == 0 || o.flags&obsWarm != 0 {
			return
		}
		svcS.Add(id, float64(o.svc))
		if o.flags&obsUnattributed == 0 {
			for _, p := range parts {
				partS[p].Add(id, float64(o.part[p]))
			}
		}
	})
	cut, cutAt := m.warmupCut(&r, warmS, warm, measured)
	lib := func() *hdrhistogram.Histogram { return newHist() }
	e2e, svc := lib(), lib()
	var partH [nParts]*hdrhistogram.Histogram
	for _, p := range parts {
		partH[p] = lib()
	}
	var groupH [][2]*hdrhistogram.Histogram
	if m.nGroups > 1 {
		for range m.nGroups {
			groupH = append(groupH, [2]*hdrhistogram.Histogram{lib(), lib()})
		}
	}
	dups := stats.NewRatioSeries()
	m.obs.each(func(id int64, o *meterObs) {
		if o.flags&obsStored == 0 || o.flags&obsWarm != 0 {
			return
		}
		dups.Add(id, float64(max(int(o.successes)-1, 0)), 1)
		if o.flags&obsMeasured == 0 || id < cut {
			return
		}
		record(e2e, int64(o.e2e))
		record(svc, int64(o.svc))
		if int(o.group) < len(groupH) {
			record(groupH[o.group][0], int64(o.e2e))
			record(groupH[o.group][1], int64(o.svc))
		}
		if o.flags&obsUnattributed != 0 {
			r.breakdown.Unattributed++
			return
		}
		for _, p := range parts {
			record(partH[p], int64(o.part[p]))
		}
	})
	r.e2eLat = latency(e2e)
	iv := &r.intervals
	iv.Level = IntervalLevel
	var est [2][3]float64
	var ind [2][3]*stats.Series
	for j, q := range intervalQuantiles {
		est[0][j], est[1][j] = float64(e2e.ValueAtQuantile(100*q)), float64(svc.ValueAtQuantile(100*q))
		ind[0][j], ind[1][j] = stats.NewSeries(), stats.NewSeries()
	}
	m.obs.each(func(id int64, o *meterObs) {
		if id < cut || o.flags&obsMeasured == 0 || o.flags&obsWarm != 0 {
			return
		}
		for j := range intervalQuantiles {
			for k, v := range [2]uint32{o.e2e, o.svc} {
				x := 0.0
				if float64(v) <= est[k][j] {
					x = 1
				}
				ind[k][j].Add(id, x)
			}
		}
	})
	var qs [2][3]stats.Interval
	for k, h := range [2]*hdrhistogram.Histogram{e2e, svc} {
		for j, q := range intervalQuantiles {
			qs[k][j] = stats.QuantileByProportion(q, est[k][j], ind[k][j].MeanCI(cut, IntervalLevel),
				func(p float64) float64 { return float64(h.ValueAtQuantile(100 * p)) })
		}
	}
	iv.EndToEnd = latencyIntervals(e2eS, qs[0], cut)
	iv.ServiceTime = latencyIntervals(svcS, qs[1], cut)
	iv.DuplicatesPct = scaled(toInterval(dups.CI(cut, IntervalLevel)), 100)
	for _, p := range parts {
		r.breakdown.Parts = append(r.breakdown.Parts, model.LatencyPart{Name: partNames[p], Latency: latency(partH[p]),
			MeanInterval: toInterval(partS[p].MeanCI(cut, IntervalLevel))})
	}
	r.throughput(m.series, cutAt, safety)
	// Keep the library's histograms' latencies for the comparison.
	r.groups = nil
	for _, g := range groupH {
		r.groups = append(r.groups, groupHists{fromLib(g[0]), fromLib(g[1])})
	}
	r.e2e, r.svc = fromLib(e2e), fromLib(svc)
	for _, p := range parts {
		r.parts[p] = fromLib(partH[p])
	}
	return r
}

// fromLib is a hist of the library histogram's counts.
func fromLib(h *hdrhistogram.Histogram) *hist {
	out := newHistCounts()
	for i, c := range h.Export().Counts {
		for range c {
			out.record(histLowest(i))
		}
	}
	return out
}

// analyze makes of every run's records what the reference, which read
// them three times, made: the same cut, histograms slot for slot,
// intervals, breakdown and warm-up, whatever froze, went late or came
// before the cut; with a fixed and an automatic warm-up, one group and
// several, a transient that MSER-5 cuts and none.
func TestAnalyzeIsTheReference(t *testing.T) {
	for seed := range uint64(24) {
		rng := rand.New(rand.NewPCG(seed, 77))
		w := WarmupAuto
		if seed%4 == 3 {
			w = FixedWarmup(2 * clock.Second)
		}
		m := newMeter(0, w, clock.Time(20*clock.Second))
		m.atBroker = seed%3 == 1
		if seed%2 == 1 {
			m.nGroups = 3
		}
		st := &m.obs
		st.keep = []int{0, 1, 3, obsKeepLive}[seed/4%4] // blocks frozen as they close, all but the newest few, none
		n := 1 + rng.IntN(7*obsBlock)
		transient := rng.IntN(n/2 + 1)
		for id := 1; id <= n; id++ {
			st.grow(model.MsgID(id))
			o := st.at(model.MsgID(id))
			o.flags, o.storedMs = obsStored, uint32(id)
			if rng.IntN(50) == 0 {
				o.flags = 0 // a unit no group is owed
			}
			if m.fixed && id < n/5 {
				o.flags |= obsWarm
			}
			o.group = uint16(rng.IntN(3))
			o.successes = uint8(rng.IntN(3))
			if rng.IntN(8) != 0 && o.flags != 0 {
				o.flags |= obsMeasured
				if rng.IntN(20) == 0 {
					o.flags |= obsUnattributed
				}
				scale := 1 << (4 + rng.IntN(14))
				if id < transient {
					scale <<= 6 // a start-up backlog
				}
				for p := range o.part {
					o.part[p] = uint32(rng.IntN(scale))
				}
				o.e2e, o.svc = sumParts(o, partBroker, nParts), sumParts(o, partLocal, partAck+1)
				if rng.IntN(10) == 0 {
					o.e2e = uint32(rng.IntN(1 << 20))
				}
			}
			if id%obsBlock == 0 && rng.IntN(3) != 0 {
				st.freeze(model.MsgID(id + 1))
			}
		}
		for range 5 { // late consumptions of frozen records
			if id := 1 + rng.IntN(n); st.at(model.MsgID(id)) != nil {
				st.at(model.MsgID(id)).successes++
			}
		}
		m.series = []model.SeriesPoint{{AtMs: 1000, Acked: 5}, {AtMs: 2000, Acked: 7}}
		want := refMeasurement(m, 20*clock.Second)
		got := m.analyze(20 * clock.Second)
		if !reflect.DeepEqual(got.warmup, want.warmup) || !reflect.DeepEqual(got.intervals, want.intervals) ||
			!reflect.DeepEqual(got.breakdown, want.breakdown) || got.e2eLat != want.e2eLat || got.tput != want.tput {
			t.Fatalf("seed %d: analyze\n%+v\nthe reference\n%+v", seed, got, want)
		}
		hs := func(r measurement) []*hist {
			out := []*hist{r.e2e, r.svc}
			for _, p := range m.partOrder() {
				out = append(out, r.parts[p])
			}
			for _, g := range r.groups {
				out = append(out, g.e2e, g.svc)
			}
			return out
		}
		g, wh := hs(got), hs(want)
		if len(g) != len(wh) {
			t.Fatalf("seed %d: %d histograms, the reference %d", seed, len(g), len(wh))
		}
		for i := range g {
			if !reflect.DeepEqual(g[i].hdr().Export().Counts, wh[i].hdr().Export().Counts) {
				t.Fatalf("seed %d: histogram %d differs from the reference's", seed, i)
			}
		}
		t.Logf("seed %d: %d records, cut %+v", seed, n, got.warmup)
	}
}

// The kinds observe passes by without an orderly group (those not in
// meterKinds) change nothing observeEvent keeps about a message, whatever
// the event says of it: meterKinds holds every kind it reads.
func TestMeterKindsHoldWhatTheMeterReads(t *testing.T) {
	for k := range 256 {
		kind := model.EventKind(k)
		if meterKinds[kind] || kind == model.EvCommit { // commits: read with an orderly group only
			continue
		}
		m := newMeter(0, WarmupAuto, 1<<40)
		g := &group{}
		m.produced(g, 1, 0, 0)
		m.observeEvent(&model.Event{Kind: model.EvLease, Msg: 1, Client: 0, Lease: 7, At: 1})
		m.observeEvent(&model.Event{Kind: model.EvDeliver, Msg: 1, Client: 0, Lease: 7, At: 2})
		state, obs := append([]msgState(nil), m.state...), *m.obs.at(1)
		for _, reason := range []model.Reason{0, model.RSuccess} {
			m.observeEvent(&model.Event{Kind: kind, Msg: 1, Client: 0, Lease: 7, Next: 8, Ended: 7, At: 5, Reason: reason})
		}
		if !reflect.DeepEqual(m.state, state) || *m.obs.at(1) != obs || m.more != nil {
			t.Errorf("%v: observeEvent changed the message (%+v, %+v), which observe would not have let it see", kind, m.state, *m.obs.at(1))
		}
	}
}
