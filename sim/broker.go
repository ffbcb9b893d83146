package sim

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"popsim/clock"
	"popsim/model"
	"popsim/workload"
	"popsim/workload/pcg"
)

// The broker cost model (BrokerSpec, docs/calibration.md). Without it the
// engine serves a request the moment it arrives and answers at once. With
// it, a request that arrives takes a thread of its pool (FIFO per pool,
// as RocketMQ's executors queue their tasks), a pop then its pop lock (KV
// path: one per group@topic; checkpoint path: one per queue, taken only
// by pops that name their queue), then one of the cores (FIFO across
// pools). The engine serves it when it gets the core, so its state
// changes then; its answer leaves when its service time is over: its
// kind's cost plus the cost of the store work the engine reports the call
// did (the delta of the engine's counters). The lock and the thread are
// held until then. The broker's periodic work (revive, scans, cache
// cleanup) runs on time, as without the model, and then takes a core for
// its own cost, delaying the requests behind it. Service times draw from
// their own random stream, so the workload's draws do not move.

// brokerPool is one of the broker's request thread pools.
type brokerPool int

const (
	poolSend brokerPool = iota
	poolPull
	poolAck
	poolManage
	nPools
)

// poolNames are RocketMQ's executors, by pool.
var poolNames = [nPools]string{"sendMessageExecutor", "pullMessageExecutor", "ackMessageExecutor", "consumerManageExecutor"}

// brokerOp is a request kind with its own cost.
type brokerOp int

const (
	opPut brokerOp = iota
	opPop
	opAck
	opChange
	opPull
	opOffset
	nOps
)

// opPools: the pool of each request kind.
var opPools = [nOps]brokerPool{poolSend, poolPull, poolAck, poolAck, poolPull, poolManage}

// brokerJob is one request at the broker, or a periodic job's core time.
type brokerJob struct {
	r       Request
	put     *putReq
	op      brokerOp
	tick    bool // a periodic job's core time: no pool, no engine call
	svc     clock.Duration
	arrived clock.Time
	lockKey string
	lock    *brokerLock
	lockAt  clock.Time // when it started waiting for its lock
	thread  clock.Time // when it got its thread
	answers []Request
}

type brokerLock struct {
	held bool
	wait []*brokerJob
}

// poolState is a pool's threads and its FIFO of requests waiting for one.
type poolState struct {
	threads, busy int
	wait          []*brokerJob
	busyTime      clock.Duration
	requests      int64
	queue, svc    *hdrhistogram.Histogram
}

// broker is the cost model's state.
type broker struct {
	s          *sim
	idx        int32 // which broker of the cluster
	cores      int
	busyCores  int
	ready      []*brokerJob // holding their thread (and lock), waiting for a core
	pools      [nPools]poolState
	locks      map[string]*brokerLock
	rng        *pcg.Rand
	costs      [nOps]workload.Dist
	tickCost   workload.Dist
	work       []WorkCost
	counters   engineCounters
	locker     popLocker
	before     []int64
	free       []*brokerJob
	coreBusy   clock.Duration
	tickBusy   clock.Duration
	queue, svc *hdrhistogram.Histogram
	lockWait   *hdrhistogram.Histogram
}

// popLocker is an engine whose pops serialise on a lock: popLockKey names
// the lock a request takes ("" for none).
type popLocker interface {
	popLockKey(r Request) string
}

// newBroker returns the cost model of spec (nil without one). Work costs
// must name counters the engine reports.
func newBroker(s *sim, spec *BrokerSpec, idx int32, eng Engine) (*broker, error) {
	if !spec.on() {
		return nil, nil
	}
	b := &broker{s: s, idx: idx, cores: spec.Cores, locks: map[string]*brokerLock{}, rng: newStream(s.cfg.Seed+uint64(idx), streamBroker),
		work: spec.Costs.Work, queue: newHist(), svc: newHist(), lockWait: newHist()}
	for i, n := range [nPools]int{spec.SendThreads, spec.PullThreads, spec.AckThreads, spec.ManageThreads} {
		b.pools[i] = poolState{threads: n, queue: newHist(), svc: newHist()}
	}
	c := &spec.Costs
	for i, d := range [nOps]workload.DistSpec{c.Put, c.Pop, c.Ack, c.Change, c.Pull, c.Offset} {
		b.costs[i] = d.Dist
	}
	b.tickCost = c.Tick.Dist
	b.counters, _ = eng.(engineCounters)
	b.locker, _ = eng.(popLocker)
	b.before = make([]int64, len(b.work))
	if len(b.work) == 0 {
		return b, nil
	}
	if b.counters == nil {
		return nil, fmt.Errorf("broker.costs.work: the %s engine reports no work counters; give its requests' costs only", s.cfg.Engine.Kind)
	}
	have := b.counters.Counters()
	for _, w := range b.work {
		if _, ok := have[w.Name]; !ok {
			names := slices.Sorted(maps.Keys(have))
			return nil, fmt.Errorf("broker.costs.work: %q is not a counter of the %s engine: want one of %s", w.Name, s.cfg.Engine.Kind, strings.Join(names, ", "))
		}
	}
	return b, nil
}

// opOf is the cost kind of a request.
func opOf(r Request) brokerOp {
	switch r.(type) {
	case *popReq, *receiveReq, *shareFetchReq, *sqsReceiveReq:
		return opPop
	case *ackReq, *shareAckReq, *sqsDeleteReq:
		return opAck
	case *changeReq, *sqsChangeReq:
		return opChange
	case *pullReq:
		return opPull
	}
	return opOffset // group heartbeats (offsets and send-backs are served in place, without cost)
}

func (b *broker) job() *brokerJob {
	if j := takeFree(&b.free); j != nil {
		return j
	}
	return new(brokerJob)
}

// request: r reached the broker.
func (b *broker) request(r Request) {
	j := b.job()
	*j = brokerJob{r: r, op: opOf(r), arrived: b.s.q.now(), answers: j.answers[:0]}
	if b.locker != nil && j.op == opPop {
		j.lockKey = b.locker.popLockKey(r)
	}
	b.arrive(j)
}

// putMessage: a producer's message reached the broker.
func (b *broker) putMessage(r *putReq) {
	j := b.job()
	*j = brokerJob{put: r, op: opPut, arrived: b.s.q.now(), answers: j.answers[:0]}
	b.arrive(j)
}

// ticked: a periodic job ran (since the last snapshot); its work takes a
// core for its cost.
func (b *broker) ticked() {
	svc := b.sample(b.tickCost) + b.workCost()
	if svc <= 0 {
		return
	}
	j := b.job()
	*j = brokerJob{tick: true, svc: svc, arrived: b.s.q.now(), answers: j.answers[:0]}
	b.toCore(j)
}

func (b *broker) arrive(j *brokerJob) {
	p := &b.pools[opPools[j.op]]
	if p.busy < p.threads {
		p.busy++
		j.thread = b.s.q.now()
		b.takeLock(j)
		return
	}
	p.wait = append(p.wait, j)
}

// takeLock takes the job's pop lock, or queues it behind the holder.
func (b *broker) takeLock(j *brokerJob) {
	if j.lockKey == "" {
		b.toCore(j)
		return
	}
	l := b.locks[j.lockKey]
	if l == nil {
		l = &brokerLock{}
		b.locks[j.lockKey] = l
	}
	j.lock = l
	if l.held {
		j.lockAt = b.s.q.now()
		l.wait = append(l.wait, j)
		return
	}
	l.held = true
	b.toCore(j)
}

func (b *broker) toCore(j *brokerJob) {
	if b.busyCores < b.cores {
		b.start(j)
		return
	}
	b.ready = append(b.ready, j)
}

// start gives the job a core: the engine serves it now, and it holds the
// core for its service time.
func (b *broker) start(j *brokerJob) {
	s := b.s
	now := s.q.now()
	b.busyCores++
	if !j.tick {
		j.svc = b.serve(j)
		b.measure(j, now)
	}
	b.coreBusy += b.within(now, j.svc)
	if j.tick {
		b.tickBusy += b.within(now, j.svc)
	}
	s.q.after(j.svc, tkBrokerDone, -1-b.idx, 0, j)
}

// serve runs the engine's call for the job and returns its service time.
// The call's answers wait for the end of the service; its timers are armed
// at once.
func (b *broker) serve(j *brokerJob) clock.Duration {
	s := b.s
	b.snapshot()
	now := s.q.now()
	pop := j.op == opPop
	if j.put != nil {
		s.storeOnly(j.put.p, j.put.msg, j.put.intended)
		s.meter.putServed(j.put.msg.ID, now.Sub(j.arrived), now)
	} else if r := j.r; r.base().epoch != r.base().c.epoch {
		s.lostOnWay(r, model.RClientGone) // its client crashed while it waited
		return 0
	} else {
		if pop {
			s.meter.popServing(j.arrived, now)
		}
		s.eng.Serve(now, r, &s.out)
	}
	for i := 0; i < len(s.out.fx); i++ {
		if f := s.out.fx[i]; f.r != nil {
			j.answers = append(j.answers, f.r)
		} else {
			s.armEngineTimer(f.timer, f.at)
		}
	}
	clear(s.out.fx)
	s.out.fx = s.out.fx[:0]
	svc := b.sample(b.costs[j.op]) + b.workCost()
	if pop {
		s.meter.popServed(svc)
	}
	return svc
}

// measure records a started request's wait and service (the safety phase
// only).
func (b *broker) measure(j *brokerJob, now clock.Time) {
	if now >= b.s.safetyEnd {
		return
	}
	p := &b.pools[opPools[j.op]]
	p.requests++
	wait := now.Sub(j.arrived)
	record(p.queue, int64(wait))
	record(p.svc, int64(j.svc))
	record(b.queue, int64(wait))
	record(b.svc, int64(j.svc))
}

// within is the part of [now, now+d) inside the safety phase.
func (b *broker) within(now clock.Time, d clock.Duration) clock.Duration {
	end := min(now.Add(d), b.s.safetyEnd)
	if end <= now {
		return 0
	}
	return end.Sub(now)
}

// done: the job's service is over. Its answers leave, its lock, thread
// and core pass to the next in line.
func (b *broker) done(j *brokerJob) {
	s := b.s
	b.busyCores--
	if !j.tick {
		for _, r := range j.answers {
			s.respond(r)
		}
		b.release(j)
		if j.r != nil {
			if f, ok := j.r.(recyclable); ok {
				f.recycle(s)
			}
		} else {
			s.recyclePut(j.put)
		}
	}
	clear(j.answers)
	*j = brokerJob{answers: j.answers[:0]}
	b.free = append(b.free, j)
	for b.busyCores < b.cores && len(b.ready) > 0 {
		next := b.ready[0]
		b.ready = slices.Delete(b.ready, 0, 1)
		b.start(next)
	}
}

// release passes the job's lock and thread on.
func (b *broker) release(j *brokerJob) {
	now := b.s.q.now()
	if l := j.lock; l != nil {
		if len(l.wait) > 0 {
			next := l.wait[0]
			l.wait = slices.Delete(l.wait, 0, 1)
			if now < b.s.safetyEnd {
				record(b.lockWait, int64(now.Sub(next.lockAt)))
			}
			b.toCore(next)
		} else {
			l.held = false
		}
	}
	p := &b.pools[opPools[j.op]]
	p.busyTime += b.within(j.thread, now.Sub(j.thread))
	if len(p.wait) > 0 {
		next := p.wait[0]
		p.wait = slices.Delete(p.wait, 0, 1)
		next.thread = now
		b.takeLock(next)
		return
	}
	p.busy--
}

// snapshot reads the engine's counters the work costs name.
func (b *broker) snapshot() {
	if len(b.work) == 0 || b.counters == nil {
		return
	}
	c := b.counters.Counters()
	for i, w := range b.work {
		b.before[i] = c[w.Name]
	}
}

// workCost is the cost of the work done since the snapshot.
func (b *broker) workCost() clock.Duration {
	if len(b.work) == 0 || b.counters == nil {
		return 0
	}
	c := b.counters.Counters()
	var d clock.Duration
	for i, w := range b.work {
		d += clock.Duration(c[w.Name]-b.before[i]) * w.Per
	}
	return d
}

func (b *broker) sample(d workload.Dist) clock.Duration {
	if d == nil {
		return 0
	}
	return max(d.Sample(b.rng), 0)
}

// usage is the broker's utilisation and queueing for the summary (nil
// without a cost model).
func (b *broker) usage() *model.BrokerUsage {
	if b == nil {
		return nil
	}
	span := b.s.safetyEnd.Sub(b.s.start)
	u := &model.BrokerUsage{Cores: b.cores, Utilization: busyShare(b.coreBusy, span, b.cores), Background: busyShare(b.tickBusy, span, b.cores),
		QueueDelay: latency(b.queue), Service: latency(b.svc), LockWaits: b.lockWait.TotalCount(), LockWait: latency(b.lockWait)}
	for i := range b.pools {
		p := &b.pools[i]
		u.Pools = append(u.Pools, model.PoolUsage{Name: poolNames[i], Threads: p.threads, Requests: p.requests,
			Utilization: busyShare(p.busyTime, span, p.threads), QueueDelay: latency(p.queue), Service: latency(p.svc)})
	}
	return u
}

// busyShare is busy over n × span, rounded to 4 decimals.
func busyShare(busy, span clock.Duration, n int) float64 {
	if span <= 0 || n <= 0 {
		return 0
	}
	return math.Round(float64(busy)/float64(span)/float64(n)*1e4) / 1e4
}

// busy reports whether a request or periodic job is at the broker: queued
// for a thread, a lock or a core, or being served.
func (b *broker) busy() bool {
	if b.busyCores > 0 || len(b.ready) > 0 {
		return true
	}
	for i := range b.pools {
		if b.pools[i].busy > 0 {
			return true
		}
	}
	return false
}

// brokersBusy reports whether any broker's cost model has a request or a
// periodic job in hand.
func (s *sim) brokersBusy() bool {
	for _, b := range s.brks {
		if b.busy() {
			return true
		}
	}
	return false
}

// brokerUsage is the summary's broker usage: the one broker's, or with
// several the cluster's (cores, threads, busy time and latencies added up
// over the brokers) with each broker's own in Brokers.
func (s *sim) brokerUsage() *model.BrokerUsage {
	switch len(s.brks) {
	case 0:
		return nil
	case 1:
		return s.brks[0].usage()
	}
	var all broker
	all.s = s
	all.queue, all.svc, all.lockWait = newHist(), newHist(), newHist()
	for i := range all.pools {
		all.pools[i] = poolState{queue: newHist(), svc: newHist()}
	}
	var each []model.BrokerUsage
	for _, b := range s.brks {
		each = append(each, *b.usage())
		all.cores += b.cores
		all.coreBusy += b.coreBusy
		all.tickBusy += b.tickBusy
		all.queue.Merge(b.queue)
		all.svc.Merge(b.svc)
		all.lockWait.Merge(b.lockWait)
		for i := range b.pools {
			p, q := &all.pools[i], &b.pools[i]
			p.threads += q.threads
			p.requests += q.requests
			p.busyTime += q.busyTime
			p.queue.Merge(q.queue)
			p.svc.Merge(q.svc)
		}
	}
	u := all.usage()
	u.Brokers = each
	return u
}
