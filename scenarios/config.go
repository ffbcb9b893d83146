package scenarios

import (
	"regexp"
	"strings"

	"popsim/sim"
)

// Config returns the simulator configuration of the scenario for seed.
// Zero fields keep the simulator's defaults.
func (s *Scenario) Config(seed uint64) sim.Config {
	c := sim.Config{
		Seed:           seed,
		Engine:         s.Engine.Config(),
		Network:        s.Network.spec(),
		Faults:         s.Faults.spec(s.Network.Loss),
		Swarm:          s.Faults.Swarm,
		Duration:       s.Duration.D(),
		Warmup:         s.Warmup.D(),
		DrainBudget:    s.Drain.D(),
		EventBudget:    s.EventBudget,
		SampleInterval: s.SampleInterval.D(),
	}
	for _, t := range s.Topics {
		c.Topics = append(c.Topics, sim.TopicSpec{Name: t.Name, Queues: t.Queues})
	}
	for _, g := range s.Groups {
		c.Groups = append(c.Groups, sim.GroupSpec{Name: g.Name, RetryMaxTimes: g.RetryMaxTimes})
	}
	for _, p := range s.Producers {
		c.Producers = append(c.Producers, sim.ProducerSpec{Topic: p.Topic, Arrivals: p.Arrivals.text, Tags: p.Tags.text, Count: p.Count, QueueSelect: p.QueueSelect})
	}
	for _, k := range s.Consumers {
		c.Consumers = append(c.Consumers, k.spec())
	}
	return c
}

func (k Consumer) spec() sim.ConsumerSpec {
	return sim.ConsumerSpec{
		Kind: sim.ConsumerKind(k.Kind), Group: k.Group, Topic: k.Topic, Expression: k.Expression,
		Count: k.Count, Threads: k.Threads, Batch: k.Batch,
		InvisibleTime: k.InvisibleTime.D(), PollTime: k.PollTime.D(),
		Processing: k.Processing.text, Outcomes: k.Outcomes.text,
		MaxReconsumeTimes: k.MaxReconsumeTimes, FlowControl: k.FlowControl,
		AutoRenew: k.AutoRenew, CommitInterval: k.CommitInterval.D(),
	}
}

func (n Network) spec() sim.NetworkSpec {
	return sim.NetworkSpec{
		RequestLatency: n.RequestLatency.text, ResponseLatency: n.ResponseLatency.text,
		RequestTimeout: n.RequestTimeout.D(), PollTimeoutSlack: n.PollTimeoutSlack.D(),
	}
}

// spec returns the map the simulator wants, nil when nothing is lost.
func (l Loss) spec() map[string]sim.LossSpec {
	var m map[string]sim.LossSpec
	for _, k := range []struct {
		kind string
		p    LossPair
	}{{"pop", l.Pop}, {"ack", l.Ack}, {"change", l.Change}, {"pull", l.Pull}} {
		if k.p.Request != 0 || k.p.Response != 0 {
			if m == nil {
				m = map[string]sim.LossSpec{}
			}
			m[k.kind] = sim.LossSpec{RequestPPM: int64(k.p.Request), ResponsePPM: int64(k.p.Response)}
		}
	}
	return m
}

func (f Faults) spec(loss Loss) sim.FaultSpec {
	return sim.FaultSpec{
		Loss:          loss.spec(),
		SiteEnablePPM: int64(f.SiteEnable),
		CrashEvery:    f.Crash.Every.D(), RestartDelay: f.Crash.RestartDelay.text,
		PauseEvery: f.Pause.Every.D(), PauseDuration: f.Pause.Duration.text,
		SlowEvery: f.Slow.Every.D(), SlowDuration: f.Slow.Duration.text, SlowFactor: f.Slow.Factor,
		RenewSameDeadlinePPM: int64(f.Renew.SameDeadline), RenewAtExpiryPPM: int64(f.Renew.AtExpiry),
		RenewAfterRevivePPM: int64(f.Renew.AfterRevive),
		BrokerRestartEvery:  f.BrokerRestart.Every.D(), RevivePutFailurePPM: int64(f.RevivePutFailure),
		ClockSkew: f.ClockSkew.D(),
	}
}

// checkSim validates the configuration with the simulator's own rules and
// reports a violation at the line of the scenario field it came from.
func (s *Scenario) checkSim() error {
	c := s.Config(s.Seed)
	err := c.Validate()
	if err == nil {
		return nil
	}
	msg := strings.TrimPrefix(err.Error(), "sim: ")
	m := simFieldRE.FindStringSubmatch(msg)
	if m == nil {
		return s.errAt("", "%s", msg)
	}
	path := yamlPath(m[1])
	rest := strings.TrimPrefix(strings.TrimPrefix(msg, m[1]), " ")
	return s.errAt(path, "%s", strings.TrimPrefix(rest, "= "))
}

var simFieldRE = regexp.MustCompile(`^([A-Z][A-Za-z]*(?:\[[^\]]*\])?(?:\.[A-Z][A-Za-z]*(?:\[[^\]]*\])?)*)`)

// simPaths maps sim.Config field paths whose scenario key is not simply
// the lower-camel-case of the Go name.
var simPaths = map[string]string{
	"DrainBudget":                 "drain",
	"FlowControl":                 "popThresholdForQueue",
	"Faults.SiteEnablePPM":        "faults.siteEnable",
	"Faults.CrashEvery":           "faults.crash.every",
	"Faults.RestartDelay":         "faults.crash.restartDelay",
	"Faults.PauseEvery":           "faults.pause.every",
	"Faults.PauseDuration":        "faults.pause.duration",
	"Faults.SlowEvery":            "faults.slow.every",
	"Faults.SlowDuration":         "faults.slow.duration",
	"Faults.SlowFactor":           "faults.slow.factor",
	"Faults.RenewSameDeadlinePPM": "faults.renew.sameDeadline",
	"Faults.RenewAtExpiryPPM":     "faults.renew.atExpiry",
	"Faults.RenewAfterRevivePPM":  "faults.renew.afterRevive",
	"Faults.BrokerRestartEvery":   "faults.brokerRestart.every",
	"Faults.RevivePutFailurePPM":  "faults.revivePutFailure",
	"Faults.ClockSkew":            "faults.clockSkew",
}

var lossRE = regexp.MustCompile(`^Faults\.Loss\["(\w+)"\]\.(Request|Response)PPM$`)

// yamlPath converts a sim.Config field path (Consumers[0].FlowControl)
// to the scenario key path (consumers[0].popThresholdForQueue).
func yamlPath(p string) string {
	if m := lossRE.FindStringSubmatch(p); m != nil {
		return "network.loss." + m[1] + "." + strings.ToLower(m[2])
	}
	if y, ok := simPaths[p]; ok {
		return y
	}
	parts := strings.Split(p, ".")
	for i, part := range parts {
		name, idx, _ := strings.Cut(part, "[")
		if y, ok := simPaths[name]; ok {
			name = y
		} else {
			name = lowerFirst(name)
		}
		if idx != "" {
			name += "[" + idx
		}
		parts[i] = name
	}
	return strings.Join(parts, ".")
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
