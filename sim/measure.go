package sim

import (
	"fmt"
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"

	"popsim/clock"
	"popsim/model"
	"popsim/stats"
)

// IntervalLevel is the confidence level of a run's within-run intervals.
const IntervalLevel = 0.95

// p99Messages is how many measured messages a run's p99 wants: part 1 of
// the coverage study found the per-seed p99 of runs with 28 000 messages
// 1.3-2.1 % low on average, of runs with 126 000 within 0.4 %
// (docs/statistics.md, "Coverage on the simulator").
const p99Messages = 100_000

// measurement is what the meter makes of a run at its end: the warm-up
// cut, the histograms and intervals after it, and where the time went.
type measurement struct {
	e2e, svc  *hist
	e2eLat    model.Latency // e2e.latency(), which the summary and its notes both read
	parts     [nParts]*hist // the reported parts' (partOrder); nil for the others
	warmup    model.WarmupCut
	intervals model.RunIntervals
	breakdown model.Breakdown
	tput      float64 // acks per second after the cut
	// groups: each group's end-to-end and service histograms after the
	// cut, by group index, when the run has more than one group.
	groups []groupHists
}

type groupHists struct{ e2e, svc *hist }

// analyze cuts the warm-up and measures what follows it.
//
// The measured messages are those acked whose producer sent them in the
// safety phase (after a fixed warm-up, if there is one), taken in the
// order the engine stored them (message id): the customer order of
// queueing simulation, in which the latency of every message produced is
// counted, whenever it completes. With warmup: auto, MSER-5 on their
// end-to-end latencies in that order picks the first message measured;
// everything (histograms, intervals, duplicates, throughput) is cut there.
// Within-run intervals are batch means over the same sequence.
//
// MSER-5 runs on log(1 + latency/1 ms), not on the latency: latencies are
// heavy-tailed (a 30 s redelivery among 5 ms messages), and next to such
// spikes a calm stretch at the end of a run has so little spread that
// MSER's statistic is smallest there, a false failure. The log keeps a
// start-up transient (a backlog, queues filling) plain to see.
func (m *meter) analyze(safety clock.Duration) measurement {
	var r measurement
	a := &m.agg
	m.obs.feedRest(a)
	a.begin()
	cut, cutAt := m.warmupCut(&r, a.warm, a.warmN, a.measured)
	r.measure(m, a, cut)
	r.throughput(m.series, cutAt, safety)
	return r
}

// warmupCut sets r.warmup and returns the first message id measured
// (math.MinInt64: every one) and the time of the cut from the run's start:
// a fixed warm-up's end, or where MSER-5 cuts warmS, the log latencies of
// the measured messages in id order; warm and measured are the messages
// acked before and after a fixed warm-up's end.
func (m *meter) warmupCut(r *measurement, warmS *stats.Series, warm, measured int64) (cut int64, cutAt clock.Duration) {
	cut = math.MinInt64
	cutAt = m.warmEnd.Sub(m.start)
	if m.fixed {
		r.warmup = model.WarmupCut{Rule: "fixed", AtMs: cutAt.Millis(), Messages: warm, Of: warm + measured}
		return cut, cutAt
	}
	w := warmS.Warmup()
	cut = w.At
	r.warmup = model.WarmupCut{Rule: "MSER-5", Messages: w.Truncate, Of: w.N, Failed: w.Failed, Note: w.Note}
	if w.Failed {
		// MSER-5 assumes one transient at the start; faults that strike
		// later, or a backlog that keeps growing, fail it the same way.
		r.warmup.Note += "; or its latency never settles (faults late in the run, a backlog that keeps growing): " +
			"read its numbers as an average over the run, not a steady state"
	}
	if w.Truncate > 0 {
		cutAt = clock.MillisDuration(int64(m.obs.at(model.MsgID(cut)).storedMs))
		r.warmup.AtMs = cutAt.Millis()
	}
	return cut, cutAt
}

// obsAgg is what the end of a run makes of the records as they become
// final: the series of the measured messages' end-to-end and service
// latencies and of their parts, the series MSER-5 finds the cut in, and
// the histograms of the same latencies. The store feeds it each block's
// records in id order as it freezes them (obsStore.freeze), when they are
// final (a late event changes only a frozen record's successes and client,
// which it does not read), and the end of the run the rest (feedRest).
// The series do not depend on the cut (their intervals start at a key);
// the histograms count every message, and the end of the run takes away
// those before the cut (uncount), few as a rule, so that it decodes the
// frozen records once more, not twice (measure).
type obsAgg struct {
	m              *meter
	e2e, warm, svc *stats.Series
	parts          [nParts]*stats.Series // the reported parts' (partOrder); nil for the others
	order          []int                 // m.partOrder()
	atBroker       bool                  // the at-broker part is among them (the first five always are)
	// The series are fed five observations at a time: e2e and warm by
	// main, svc by svcB, the parts by partB (their sets differ), whose
	// series are the parts' in index order, so that a part's sum is at
	// its index.
	main, svcB, partB batch5
	measured, warmN   int64
	next              int64 // the next id to add
	// The histograms of the messages measured: end to end, service, the
	// reported parts' (nil for the others), each group's when the run has
	// more than one; unattributed counts the messages without parts.
	e2eH, svcH   *hist
	partH        [nParts]*hist
	groups       []groupHists
	unattributed int64
	changes      int32 // messages counted or taken away since the histograms' last spill, at most histSpillAt (counted)
}

// begin makes the series and histograms, once: at the first record, when
// the meter knows whether the run has a broker cost model (partOrder) and
// its groups.
func (a *obsAgg) begin() {
	if a.e2e != nil {
		return
	}
	a.e2e, a.warm, a.svc, a.order = stats.NewSeries(), stats.NewSeries(), stats.NewSeries(), a.m.partOrder()
	a.main.series, a.svcB.series = []*stats.Series{a.e2e, a.warm}, []*stats.Series{a.svc}
	a.e2eH, a.svcH = a.m.newCounts(), a.m.newCounts()
	for _, p := range a.order {
		a.parts[p], a.partH[p] = stats.NewSeries(), a.m.newCounts()
	}
	for p, s := range a.parts {
		if s == nil && p != partAtBroker {
			panic("sim: a run that does not report every part but the at-broker one")
		}
		if s != nil {
			a.partB.series = append(a.partB.series, s)
		}
	}
	a.atBroker = a.parts[partAtBroker] != nil
	if a.m.nGroups > 1 {
		a.groups = make([]groupHists, a.m.nGroups)
		for i := range a.groups {
			a.groups[i] = groupHists{a.m.newCounts(), a.m.newCounts()}
		}
	}
	a.next = 1
}

// add adds record id, the next one.
func (a *obsAgg) add(id int64, o *meterObs) {
	if a.e2eH == nil {
		a.begin()
	}
	if id != a.next {
		panic("sim: the meter's records reached its aggregate out of order")
	}
	a.next++
	switch {
	case o.flags&obsMeasured == 0:
		return
	case o.flags&obsWarm != 0:
		a.warmN++
	default:
		sum := a.main.next(id)
		sum[0] += float64(o.e2e)
		sum[1] += math.Log1p(float64(o.e2e) / 1000)
		a.main.done()
		a.measured++
	}
	if o.flags&obsStored == 0 || o.flags&obsWarm != 0 {
		return
	}
	a.svcB.next(id)[0] += float64(o.svc)
	a.svcB.done()
	a.count(o)
	if o.flags&obsUnattributed == 0 {
		sum := a.partB.next(id)
		sum[partBroker] += float64(o.part[partBroker]) // by index, as partB's series (begin): no loop over order
		sum[partRedelivery] += float64(o.part[partRedelivery])
		sum[partLocal] += float64(o.part[partLocal])
		sum[partProcessing] += float64(o.part[partProcessing])
		sum[partAck] += float64(o.part[partAck])
		if a.atBroker {
			sum[partAtBroker] += float64(o.part[partAtBroker])
		}
		a.partB.done()
	}
}

// flush hands the series the observations of their unfinished batches,
// once every record is in.
func (a *obsAgg) flush() {
	a.main.flush()
	a.svcB.flush()
	a.partB.flush()
}

// batch5 feeds series their observations five at a time, one AddBatch per
// series and batch where Add takes a call and a key check per observation:
// for each observation, next gives the sums to add its values to, in the
// order of series, and done ends it. The sums start at 0 and add the
// values in order, as a Series' own do.
type batch5 struct {
	series      []*stats.Series // at most nParts (the parts' batch has the most)
	n           int
	first, last int64
	sum         [nParts]float64
}

// next begins an observation with key at.
func (b *batch5) next(at int64) *[nParts]float64 {
	if b.n == 0 {
		b.first = at
	}
	b.last = at
	return &b.sum
}

// done ends the observation next began.
func (b *batch5) done() {
	if b.n++; b.n == 5 {
		b.flush()
	}
}

// flush hands the batch so far to the series.
func (b *batch5) flush() {
	if b.n == 0 {
		return
	}
	for i, s := range b.series {
		s.AddBatch(b.first, b.last, b.sum[i], b.n)
	}
	b.n, b.sum = 0, [nParts]float64{}
}

// count adds measured message o to the histograms.
func (a *obsAgg) count(o *meterObs) {
	a.counted()
	a.e2eH.add(int64(o.e2e))
	a.svcH.add(int64(o.svc))
	if int(o.group) < len(a.groups) { // each group's too, with several
		a.groups[o.group].e2e.add(int64(o.e2e))
		a.groups[o.group].svc.add(int64(o.svc))
	}
	if o.flags&obsUnattributed != 0 {
		a.unattributed++
		return
	}
	a.partH[partBroker].add(int64(o.part[partBroker])) // every run's five by index (begin), no loop over order
	a.partH[partRedelivery].add(int64(o.part[partRedelivery]))
	a.partH[partLocal].add(int64(o.part[partLocal]))
	a.partH[partProcessing].add(int64(o.part[partProcessing]))
	a.partH[partAck].add(int64(o.part[partAck]))
	if a.atBroker {
		a.partH[partAtBroker].add(int64(o.part[partAtBroker]))
	}
}

// uncount takes the messages before cut out of the histograms, once every
// record is in: what count counted of them.
func (a *obsAgg) uncount(st *obsStore, cut int64) {
	st.eachBelow(cut, func(id int64, o *meterObs) {
		if o.flags&obsMeasured == 0 || o.flags&obsStored == 0 || o.flags&obsWarm != 0 {
			return
		}
		a.counted()
		a.e2eH.sub(int64(o.e2e))
		a.svcH.sub(int64(o.svc))
		if int(o.group) < len(a.groups) {
			a.groups[o.group].e2e.sub(int64(o.e2e))
			a.groups[o.group].svc.sub(int64(o.svc))
		}
		if o.flags&obsUnattributed != 0 {
			a.unattributed--
			return
		}
		for _, p := range a.order {
			a.partH[p].sub(int64(o.part[p]))
		}
	})
}

// counted notes that a message is about to change the histograms, each
// by one count at most: after histSpillAt of them it spills them all
// first (hist.add). It is small enough to be inlined.
func (a *obsAgg) counted() {
	if a.changes == histSpillAt {
		a.spill()
	}
	a.changes++
}

// spill spills every histogram of a's (counted).
func (a *obsAgg) spill() {
	a.changes = 0
	hs := []*hist{a.e2eH, a.svcH}
	for _, p := range a.order {
		hs = append(hs, a.partH[p])
	}
	for _, g := range a.groups {
		hs = append(hs, g.e2e, g.svc)
	}
	for _, h := range hs {
		h.spill()
	}
}

// measure fills the histograms (each group's too, when the run has
// several) and intervals from message cut on. Only the parts the run
// reports (partOrder) get a histogram and a series; the others stay nil.
func (r *measurement) measure(m *meter, a *obsAgg, cut int64) {
	a.uncount(&m.obs, cut)
	r.e2e, r.svc, r.parts, r.groups = a.e2eH, a.svcH, a.partH, a.groups
	r.breakdown.Unattributed = a.unattributed
	r.e2eLat = r.e2e.latency()
	iv := &r.intervals
	iv.Level = IntervalLevel
	e2eQ, svcQ, dups := m.quantiles(r.e2e, r.svc, cut)
	iv.EndToEnd = latencyIntervals(a.e2e, e2eQ, cut)
	iv.ServiceTime = latencyIntervals(a.svc, svcQ, cut)
	iv.DuplicatesPct = scaled(toInterval(dups.CI(0, cut, IntervalLevel)), 100)
	for _, p := range a.order {
		r.breakdown.Parts = append(r.breakdown.Parts, model.LatencyPart{Name: partNames[p], Latency: r.parts[p].latency(),
			MeanInterval: toInterval(a.parts[p].MeanCI(cut, IntervalLevel))})
	}
}

func latencyIntervals(mean *stats.Series, qs [3]stats.Interval, cut int64) model.LatencyIntervals {
	return model.LatencyIntervals{
		Mean: toInterval(mean.MeanCI(cut, IntervalLevel)),
		P50:  toInterval(qs[0]), P90: toInterval(qs[1]), P99: toInterval(qs[2]),
	}
}

// intervalQuantiles are the percentiles that get a within-run interval.
var intervalQuantiles = [3]float64{0.5, 0.9, 0.99}

// quantiles returns the within-run intervals of the end-to-end and
// service p50, p90 and p99 of the messages from cut on: the histogram's
// percentile, and the batch-means interval of the proportion of messages
// at or below it inverted through the histogram (stats.QuantileByProportion).
// The same pass over the records fills dups, the series of duplicate
// consumptions per stored message (a late event may have changed them
// after the record froze, so they are read here, at the end). Both count
// whole numbers (stats.CountSeries: the intervals of a Series and a
// RatioSeries of the same, for an increment an observation).
func (m *meter) quantiles(e2e, svc *hist, cut int64) (e2eQ, svcQ [3]stats.Interval, dups *stats.CountSeries) {
	var est [2][3]int64
	for j, q := range intervalQuantiles {
		est[0][j], est[1][j] = e2e.valueAt(100*q), svc.valueAt(100*q)
	}
	ind := stats.NewCountSeries(6) // e2e's p50, p90, p99, then svc's
	dups = stats.NewCountRatioSeries(1)
	m.obs.eachBlock(func(first int64, recs []meterObs) {
		for i := range recs {
			o, id := &recs[i], first+int64(i)
			if o.flags&obsWarm != 0 {
				continue
			}
			if o.flags&obsStored != 0 {
				dups.Add(id, int64(max(o.successes, 1)-1))
			}
			if id < cut || o.flags&obsMeasured == 0 {
				continue
			}
			ind.Add(id, atMost(o.e2e, est[0][0]), atMost(o.e2e, est[0][1]), atMost(o.e2e, est[0][2]),
				atMost(o.svc, est[1][0]), atMost(o.svc, est[1][1]), atMost(o.svc, est[1][2]))
		}
	})
	for j, q := range intervalQuantiles {
		e2eQ[j] = stats.QuantileByProportion(q, float64(est[0][j]), ind.CI(j, cut, IntervalLevel), quantileOf(e2e))
		svcQ[j] = stats.QuantileByProportion(q, float64(est[1][j]), ind.CI(3+j, cut, IntervalLevel), quantileOf(svc))
	}
	return e2eQ, svcQ, dups
}

// atMost is 1 when v <= x, else 0.
func atMost(v uint32, x int64) int64 {
	if int64(v) <= x {
		return 1
	}
	return 0
}

// quantileOf is a histogram's quantile function (p from 0 to 1).
func quantileOf(h *hist) func(float64) float64 {
	return func(p float64) float64 { return float64(h.valueAt(100 * p)) }
}

// throughput is acks per second over the sample intervals of the safety
// phase that start at or after the cut, with their batch interval.
func (r *measurement) throughput(series []model.SeriesPoint, cutAt, safety clock.Duration) {
	rs := stats.NewRatioSeries()
	var acks, secs float64
	prev := int64(0)
	for _, p := range series {
		from := prev
		prev = p.AtMs
		if from < cutAt.Millis() || p.AtMs > safety.Millis() {
			continue
		}
		s := float64(p.AtMs-from) / 1000
		rs.Add(from, float64(p.Acked), s)
		acks, secs = acks+float64(p.Acked), secs+s
	}
	r.intervals.ThroughputPerSec = toInterval(rs.CI(math.MinInt64, IntervalLevel))
	if secs > 0 {
		r.tput = acks / secs
	}
}

// notes says what a reader must know to read the run's numbers: a p99
// from too few messages, a consumer kind that does not share one queue
// and what its local buffer cost, messages whose parts were not seen.
func (s *sim) notes(r *measurement) []string {
	var out []string
	e2e := r.e2eLat
	if e2e.Count > 0 && e2e.Count < p99Messages {
		out = append(out, fmt.Sprintf("p99 from %d messages after the warm-up: runs this short read their p99 low on average (the validation "+
			"scenarios' 60 s runs, 28 000 messages: 1.3-2.1 %% low; 200 s runs within 0.4 %%), a bias more seeds do not cure; run longer "+
			"for the tail (%d messages or more)", e2e.Count, p99Messages))
	}
	local := r.breakdown.Part(model.PartLocalBuffer)
	share := ""
	if e2e.Mean > 0 && local.Count > 0 {
		share = fmt.Sprintf(" Here messages waited in a client's local buffer %.2f ms on average (p99 %.2f ms): %.1f %% of the mean end-to-end latency.",
			float64(local.Mean)/1000, float64(local.P99)/1000, 100*float64(local.Mean)/float64(e2e.Mean))
	}
	seen := map[ConsumerKind]bool{}
	for _, c := range s.c.consumers {
		if seen[c.Kind] {
			continue
		}
		seen[c.Kind] = true
		switch set := c.Settings.(type) {
		case *PopPushSettings:
			out = append(out, fmt.Sprintf("pop-push consumers do not serve one shared queue: each client keeps popping batches of up to %d "+
				"while its threads are busy, until more than popThresholdForQueue (%d) of its messages wait for an ack (flow control), "+
				"so a message can wait in one client's buffer while another client's threads are idle.%s", c.Batch, set.PopThresholdForQueue, share))
		case *PullSettings:
			out = append(out, fmt.Sprintf("pull consumers do not serve one shared queue: each queue has one owner, which pulls ahead up to "+
				"pullThresholdForQueue (%d) messages per queue, so a message waits behind its own queue even while other consumers are idle.%s",
				pullThresholdForQueue, share))
		}
	}
	if n := r.breakdown.Unattributed; n > 0 {
		out = append(out, fmt.Sprintf("%d measured messages are in no part of the breakdown: the trace did not show their delivery and consumption", n))
	}
	return out
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histSigFig) }

// toInterval converts a stats.Interval into the summary's model.Interval.
func toInterval(iv stats.Interval) model.Interval {
	return model.Interval{Est: iv.Est, Lo: iv.Lo, Hi: iv.Hi, Level: iv.Level, N: iv.N,
		Method: string(iv.Method), OK: iv.OK, Note: iv.Note}
}

// scaled multiplies an interval's numbers by f (a fraction into percent).
func scaled(iv model.Interval, f float64) model.Interval {
	iv.Est, iv.Lo, iv.Hi = iv.Est*f, iv.Lo*f, iv.Hi*f
	return iv
}
