package serve

import (
	"fmt"
	"math/rand/v2"
	"time"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
	"popsim/proxy"
)

// loop owns the engine. One goroutine (run) calls the broker, in the order
// requests arrive on ops and when periodic work falls due; gRPC handlers
// never touch the broker or anything below, they send closures on ops and
// wait for the answer. Every field below ops is the loop goroutine's alone.
type loop struct {
	clk  *clock.Real
	ops  chan func(now clock.Time)
	quit chan struct{} // closed by stop
	done chan struct{} // closed when run returns
	logf func(format string, args ...any)

	b      *pop.Broker
	px     *proxy.Proxy // the proxy in front of b: receive, ack, renew
	cfg    *Config
	groups map[string]pop.GroupConfig
	// polls are the receives the broker suspended, by poll id.
	polls map[uint64]*receiveCall
	// rr is each topic's send round robin (the proxy's write selector).
	rr map[string]uint32

	faults                Faults
	rng                   *rand.Rand
	nextRevive, nextClean clock.Time
	nextRestart           clock.Time // 0: no periodic restart
	renewBuf              []proxy.Renewal
	observe               func(event string) // tests: told "park" and "auto-renew" as they happen
	onRestart             func() int         // the proxy's client table forgets its clients
	storeHost             string             // the listening address, shown as messages' store host
	Stats
}

// Stats counts what the server did since it started.
type Stats struct {
	Sent, Acks, Renewals, AutoRenewals int
	Forwarded                          int // messages the proxy sent to %DLQ%group
	Revived, ReviveDropped             int
	PutFailures                        int // store writes the engine's faults failed
	// Requests (AcksLost) and responses (the rest) the faults lost.
	AcksLost, AckResponsesLost, ReceivesLost, ChangesLost, SendsLost int
	Restarts                                                         int
}

// The loop's cadence for the engine's periodic work (RocketMQ's).
const (
	reviveEvery  = clock.Duration(pop.ReviveIdleInterval) * clock.Millisecond
	cleanupEvery = clock.Duration(pop.CacheCleanupInterval) * clock.Millisecond
)

func newLoop(cfg *Config, logf func(string, ...any)) (*loop, error) {
	b, err := newBroker(cfg)
	if err != nil {
		return nil, err
	}
	l := &loop{
		clk: clock.NewReal(), ops: make(chan func(clock.Time)), quit: make(chan struct{}), done: make(chan struct{}), logf: logf,
		b: b, cfg: cfg, groups: map[string]pop.GroupConfig{}, polls: map[uint64]*receiveCall{}, rr: map[string]uint32{},
	}
	l.px = proxy.New(b, cfg.Proxy)
	for _, g := range cfg.Groups {
		if err := l.ensureGroup(g); err != nil {
			return nil, err
		}
	}
	now := l.clk.Now()
	l.nextRevive, l.nextClean = now.Add(reviveEvery), now.Add(cleanupEvery)
	if err := l.setFaults(now, cfg.Faults); err != nil {
		return nil, err
	}
	return l, nil
}

// newBroker builds the engine on the configured path with the topics.
func newBroker(cfg *Config) (*pop.Broker, error) {
	if cfg.Path != PathKV && cfg.Path != PathCheckpoint {
		return nil, fmt.Errorf("serve: path %q: want %q or %q", cfg.Path, PathCheckpoint, PathKV)
	}
	bc := cfg.Broker
	bc.PopConsumerKVServiceEnable = cfg.Path == PathKV
	b, err := pop.New(bc)
	if err != nil {
		return nil, err
	}
	for _, t := range cfg.Topics {
		if err := b.CreateTopic(pop.TopicConfig{Name: t.Name, ReadQueueNums: t.Queues, WriteQueueNums: t.Queues}); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// run is the engine goroutine.
func (l *loop) run() {
	defer close(l.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := l.clk.Now()
		l.tick(now)
		wait := l.nextDue(now).Sub(now)
		timer.Reset(max(wait, 0).Std())
		select {
		case <-l.quit:
			l.dropPolls("the server is stopping")
			return
		case op := <-l.ops:
			op(l.clk.Now())
		case <-timer.C:
		}
	}
}

// do runs f on the engine goroutine and waits for it; false means the
// server stopped first and f did not run.
func (l *loop) do(f func(now clock.Time)) bool {
	ran := make(chan struct{})
	select {
	case l.ops <- func(now clock.Time) { f(now); close(ran) }:
	case <-l.done:
		return false
	}
	select {
	case <-ran:
		return true
	case <-l.done:
		return false
	}
}

func (l *loop) stop() {
	select {
	case <-l.quit:
	default:
		close(l.quit)
	}
	<-l.done
}

// nextDue is the earliest time the engine has periodic work.
func (l *loop) nextDue(now clock.Time) clock.Time {
	due := now.Add(clock.Minute)
	switch {
	case l.faults.RevivePause:
	case l.checkpoint():
		if t, ok := l.b.NextCheckpointTick(); ok {
			due = min(due, t)
		}
	default:
		due = min(due, l.nextRevive)
		if l.cfg.Broker.EnablePopBufferMerge {
			due = min(due, l.nextClean)
		}
	}
	if t, ok := l.b.NextPollExpiry(); ok {
		due = min(due, t)
	}
	if l.nextRestart != 0 {
		due = min(due, l.nextRestart)
	}
	if t, ok := l.px.NextDue(); ok {
		due = min(due, t)
	}
	return due
}

// checkpoint reports whether the engine runs the checkpoint path.
func (l *loop) checkpoint() bool { return l.cfg.Path == PathCheckpoint }

// tick runs whatever periodic work is due: on the checkpoint path
// CheckpointTick when NextCheckpointTick says (the timer wheel, the
// buffer's scans, the revive rounds); on the KV path revive every 500 ms
// (at once after a full page) and the cache cleanup every second; poll
// expiry exactly when due, and the periodic restart fault. The revive
// pause fault holds all of a path's periodic work.
func (l *loop) tick(now clock.Time) {
	if l.nextRestart != 0 && now >= l.nextRestart {
		l.restart(now, "restart_every")
		l.nextRestart = now.Add(clock.Duration(l.faults.RestartEvery / time.Microsecond))
	}
	if l.checkpoint() {
		if t, ok := l.b.NextCheckpointTick(); ok && now >= t && !l.faults.RevivePause {
			r := l.b.CheckpointTick(now)
			l.noteRevivals(r.Revivals, len(r.Failures))
			l.wake(now, r.Woken)
		}
	} else if !l.faults.RevivePause {
		if now >= l.nextRevive {
			r := l.b.Revive(now)
			l.noteRevivals(r.Revivals, len(r.Failures))
			l.wake(now, r.Woken)
			l.nextRevive = now.Add(reviveEvery)
			if r.FullPage {
				l.nextRevive = now
			}
		}
		if l.cfg.Broker.EnablePopBufferMerge && now >= l.nextClean {
			r := l.b.CleanupCache(now)
			l.noteRevivals(r.Revives, len(r.Failures))
			l.wake(now, r.Woken)
			l.nextClean = now.Add(cleanupEvery)
		}
	}
	if t, ok := l.b.NextPollExpiry(); ok && now >= t {
		l.wake(now, l.b.PollTick(now))
	}
	if t, ok := l.px.NextDue(); ok && now >= t {
		l.autoRenew(now)
	}
}

// autoRenew sends the proxy's due renewals to the broker and reports the
// answers (the proxy and the broker share this goroutine, so every
// renewal gets its answer at once).
func (l *loop) autoRenew(now clock.Time) {
	l.renewBuf = l.px.Tick(now, l.renewBuf[:0])
	for i := range l.renewBuf {
		r := &l.renewBuf[i]
		if r.Expired {
			continue
		}
		res := l.b.ChangeInvisibleTime(now, &r.Request)
		l.px.Renewed(r.ID, &res)
		if res.Code == model.Success {
			l.AutoRenewals++
			l.note("auto-renew")
		}
	}
}

func (l *loop) noteRevivals(rs []pop.Revival, failures int) {
	l.PutFailures += failures
	for i := range rs {
		switch rs[i].Outcome {
		case pop.Revived:
			l.Revived++
		case pop.ReviveDropped:
			l.ReviveDropped++
		}
	}
}

// wake re-runs suspended receives the broker handed back. A receive whose
// caller has gone is not re-run (the broker checks the channel is still
// active before it re-runs a request).
func (l *loop) wake(now clock.Time, ws []pop.Wakeup) {
	ws = append([]pop.Wakeup(nil), ws...) // re-runs may reuse the storage ws came in
	for i := range ws {
		rc := l.polls[ws[i].ID]
		if rc == nil {
			continue
		}
		delete(l.polls, ws[i].ID)
		if rc.gone {
			continue
		}
		rc.req = ws[i].Request
		l.popFor(now, rc)
	}
}

// restart restarts the server in place: the broker loses its volatile
// state (suspended receives, whose callers get an error at once, the
// cache, pull offsets), the proxy its managed handles and its client
// table (the telemetry streams end).
func (l *loop) restart(now clock.Time, why string) {
	r := l.b.Restart(now)
	l.px = proxy.New(l.b, l.cfg.Proxy) // the proxy restarts with the broker: managed handles are gone
	l.Restarts++
	l.dropPolls("the broker restarted")
	clients := 0
	if l.onRestart != nil {
		clients = l.onRestart()
	}
	l.logf("restarted (%s): %d suspended receives dropped, %d cached leases lost, %d clients forgotten", why, len(r.DroppedPolls), r.CachedLost, clients)
}

// setFaults puts f in force: the engine's share as data, the rest in the
// loop (the generator restarts from f.Seed).
func (l *loop) setFaults(now clock.Time, f Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if err := l.b.SetFaults(f.engineFaults()); err != nil {
		return err
	}
	l.faults = f
	l.rng = rand.New(rand.NewPCG(f.Seed, 0x706f7073696d)) // "popsim"
	l.nextRestart = 0
	if f.RestartEvery > 0 {
		l.nextRestart = now.Add(clock.Duration(f.RestartEvery / time.Microsecond))
	}
	if !f.RevivePause && l.nextRevive < now {
		l.nextRevive = now // catch up at once after a pause
	}
	return nil
}

// note tells a test's observer about an event.
func (l *loop) note(event string) {
	if l.observe != nil {
		l.observe(event)
	}
}

// lose draws one fault decision.
func (l *loop) lose(p float64) bool { return p > 0 && l.rng.Float64() < p }

// ensureGroup creates a group with RocketMQ's defaults if it does not
// exist (autoCreateSubscriptionGroup).
func (l *loop) ensureGroup(name string) error {
	if _, ok := l.groups[name]; ok {
		return nil
	}
	if err := validateGroupName(name); err != nil {
		return err
	}
	g := pop.DefaultGroup(name)
	if err := l.b.CreateGroup(g); err != nil {
		return err
	}
	l.groups[name] = g
	return nil
}
