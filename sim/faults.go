package sim

import (
	"fmt"

	"popsim/clock"
	"popsim/workload"
	"popsim/workload/pcg"
)

// faultFamily groups fault sites for swarm testing: swarm mode turns whole
// families off.
type faultFamily uint8

const (
	famCrash faultFamily = iota
	famPause
	famSlow
	famLoss
	famRenew
	famBrokerRestart
	famPutFailure
	famSkew
	famLock
	numFamilies
)

var familyNames = [numFamilies]string{"crash", "pause", "slow", "loss", "renew", "broker-restart", "revive-put-failure", "clock-skew", "lock-busy"}

// site is one place a fault can fire, with its per-run activation and
// weight: a mean interval (clocked faults), a probability in ppm, or a
// bound (clock skew).
type site struct {
	name  string
	fam   faultFamily
	on    bool
	every clock.Duration
	ppm   int64
	bound clock.Duration
}

// Renewal edges injected by famRenew.
const (
	renewSameDeadline = iota
	renewAtExpiry
	renewAfterRevive
	numRenewEdges
)

// faultSites is the per-run fault configuration after two-level activation
// and swarm weighting, plus one random stream per family.
type faultSites struct {
	crash, pause, slow, broker site
	stop                       site                    // the graceful broker stop (in the broker-restart family)
	loss                       [len(lossKinds)][2]site // [request type][0 request, 1 response]
	renew                      [numRenewEdges]site
	putFailure, skew, lock     site
	dup                        site // SQS duplicate deliveries (in the engine-fault family)
	readFailure                site // in the revive-put-failure family: revive failures
	rng                        [numFamilies]*pcg.Rand
}

// drawFaultSites draws the sites from the activation stream: first the swarm mask
// (one draw per family, so shrinking turns families off), then per site
// the swarm weight and the activation draw.
func drawFaultSites(seed uint64, c *Config) *faultSites {
	f := &c.Faults
	p := &faultSites{}
	for i := range p.rng {
		p.rng[i] = newStream(seed, streamFault0+uint64(i))
	}
	r := newStream(seed, streamActivation)
	var off [numFamilies]bool
	if f.Swarm {
		for i := range famLock { // famLock draws last: runs without it draw as before it existed
			off[i] = r.IntN(2) == 0
		}
	}
	mk := func(name string, fam faultFamily, every clock.Duration, ppm PPM, bound clock.Duration) site {
		s := site{name: name, fam: fam, every: every, ppm: int64(ppm), bound: bound}
		configured := every > 0 || ppm > 0 || bound > 0
		scale := 0
		if f.Swarm {
			scale = r.IntN(7) - 3 // weight x 2^scale, 1/8 .. 8
		}
		enabled := chance(r, int64(f.SiteEnable))
		s.on = configured && enabled && !off[fam]
		s.scale(scale)
		return s
	}
	p.crash = mk("crash", famCrash, f.Crash.Every, 0, 0)
	p.pause = mk("pause", famPause, f.Pause.Every, 0, 0)
	p.slow = mk("slow", famSlow, f.Slow.Every, 0, 0)
	for i, l := range c.Network.Loss.pairs() {
		k := lossKinds[i]
		p.loss[i][0] = mk("lost-"+k+"-request", famLoss, 0, l.Request, 0)
		p.loss[i][1] = mk("lost-"+k+"-response", famLoss, 0, l.Response, 0)
	}
	p.renew[renewSameDeadline] = mk("renew-same-deadline", famRenew, 0, f.Renew.SameDeadline, 0)
	p.renew[renewAtExpiry] = mk("renew-at-expiry", famRenew, 0, f.Renew.AtExpiry, 0)
	p.renew[renewAfterRevive] = mk("renew-after-revive", famRenew, 0, f.Renew.AfterRevive, 0)
	p.broker = mk("broker-restart", famBrokerRestart, f.BrokerRestart.Every, 0, 0)
	p.putFailure = mk("revive-put-failure", famPutFailure, 0, f.RevivePutFailure, 0)
	p.skew = mk("clock-skew", famSkew, 0, 0, f.ClockSkew)
	if f.DuplicateDelivery > 0 {
		// Drawn last and only when configured, so that runs without it
		// draw as before.
		p.dup = mk("duplicate-delivery", famPutFailure, 0, f.DuplicateDelivery, 0)
	}
	if f.Swarm {
		off[famLock] = r.IntN(2) == 0
	}
	p.lock = mk("lock-busy", famLock, 0, f.LockBusy, 0)
	// Added last, so that the draws of the sites above stay as they were.
	p.readFailure = mk("revive-read-failure", famPutFailure, 0, f.ReviveReadFailure, 0)
	if f.BrokerStop.Every > 0 {
		// Drawn last and only when configured, so that runs without it
		// draw as before.
		p.stop = mk("broker-stop", famBrokerRestart, f.BrokerStop.Every, 0, 0)
	}
	return p
}

// lossy reports whether some loss site is on with a probability.
func (p *faultSites) lossy() bool {
	for i := range p.loss {
		for _, st := range &p.loss[i] {
			if st.on && st.ppm > 0 {
				return true
			}
		}
	}
	return false
}

// renewing reports whether some renewal site is on.
func (p *faultSites) renewing() bool {
	for _, st := range &p.renew {
		if st.on {
			return true
		}
	}
	return false
}

// scale multiplies the site's weight by 2^k: shorter intervals and higher
// probabilities for k > 0. Probabilities are capped at 50% for losses and
// 100% otherwise; the skew bound is not scaled.
func (s *site) scale(k int) {
	for ; k > 0; k-- {
		s.every /= 2
		s.ppm *= 2
	}
	for ; k < 0; k++ {
		s.every *= 2
		s.ppm /= 2
	}
	if s.every != 0 {
		s.every = min(max(s.every, 100*clock.Millisecond), 24*clock.Hour)
	}
	hi := int64(1_000_000)
	if s.fam == famLoss {
		hi = 500_000
	}
	s.ppm = min(s.ppm, hi)
}

// all lists every site, in the order of the run's header.
func (p *faultSites) all() []*site {
	out := []*site{&p.crash, &p.pause, &p.slow}
	for i := range p.loss {
		out = append(out, &p.loss[i][0], &p.loss[i][1])
	}
	for i := range p.renew {
		out = append(out, &p.renew[i])
	}
	out = append(out, &p.broker, &p.putFailure, &p.skew, &p.lock)
	if p.dup.name != "" {
		out = append(out, &p.dup)
	}
	return append(out, &p.readFailure)
}

// lines renders the sites, one per line, for the run's header.
func (p *faultSites) lines() []string {
	var out []string
	for _, s := range p.all() {
		state := "off"
		if s.on {
			state = "on"
		}
		w := ""
		switch {
		case s.every > 0:
			w = " every=" + s.every.Std().String()
		case s.ppm > 0:
			w = fmt.Sprintf(" ppm=%d", s.ppm)
		case s.bound > 0:
			w = " bound=" + s.bound.Std().String()
		}
		out = append(out, fmt.Sprintf("fault %s: %s%s", s.name, state, w))
	}
	return out
}

// expDelay draws an exponential delay with the given mean (1us..24h),
// through workload's portable sampler, at least 1us.
func expDelay(r *pcg.Rand, mean clock.Duration) clock.Duration {
	d, err := workload.NewExponential(mean)
	if err != nil {
		panic("sim: fault interval out of range: " + err.Error())
	}
	return max(d.Sample(r), 1)
}

// Coverage keys: how often each fault path and each interesting client
// path fired. Every key is always present, so a sweep shows zeros too.
var coverageKeys = []string{
	"crash", "restart", "pause", "slow",
	"lost-pop-request", "lost-pop-response", "lost-ack-request", "lost-ack-response",
	"lost-change-request", "lost-change-response", "lost-pull-request", "lost-pull-response",
	"renew-same-deadline", "renew-at-expiry", "renew-after-revive",
	"broker-restart", "dropped-polls", "revive-put-failure", "clock-skew",
	"client-timeout", "late-response", "expired-before-consume", "expired-after-consume", "expired-handle-rejected",
	"flow-control", "rebalance", "dlq", "drop-push-max-reconsume", "drop-push-age-4h",
	"revive-retried", "revive-dropped", "auto-renew", "renew-retry",
	"lapse", "order-suspend", "reentrant-retry", "lease-reopened", "ack-cut-off",
	"batch-ack", "listener-batch", "drop-no-match",
}

type coverage struct {
	n map[string]int64
}

// newCoverage has every common key and the engine's own (engineKind.coverage).
func newCoverage(engine ...string) coverage {
	c := coverage{n: make(map[string]int64, len(coverageKeys)+len(engine))}
	for _, k := range coverageKeys {
		c.n[k] = 0
	}
	for _, k := range engine {
		c.n[k] = 0
	}
	return c
}

func (c coverage) hit(k string) {
	if _, ok := c.n[k]; !ok {
		panic("sim: unknown coverage key " + k)
	}
	c.n[k]++
}

// laterCoverage are coverage keys added after results were first
// committed: a summary lists them only when hit, so that runs that never
// reach them (every concurrent group) keep their summaries.
var laterCoverage = map[string]bool{"lapse": true, "order-suspend": true, "reentrant-retry": true, "batch-ack": true, "listener-batch": true,
	"drop-no-match": true}

// snapshot copies the counters.
func (c coverage) snapshot() map[string]int64 {
	out := make(map[string]int64, len(c.n))
	for k, v := range c.n { // copying: order does not matter
		if v == 0 && laterCoverage[k] {
			continue
		}
		out[k] = v
	}
	return out
}

// knownLoss reports whether k is a request type with loss faults.
func knownLoss(k string) bool {
	for _, x := range lossKinds {
		if x == k {
			return true
		}
	}
	return false
}
