package scenarios

// Network is the client–broker network.
type Network struct {
	RequestLatency   Dist     `yaml:"requestLatency"`                    // one-way, client to broker (default uniform(200us,2ms))
	ResponseLatency  Dist     `yaml:"responseLatency"`                   // one-way, broker to client (default uniform(200us,2ms))
	RequestTimeout   Duration `yaml:"requestTimeout" range:"100ms..60s"` // how long a client waits for a renewal's answer (default 3s)
	PollTimeoutSlack Duration `yaml:"pollTimeoutSlack" range:"0s..60s"`  // added to pollTime for a long poll's timeout (default 10s)
	Loss             Loss     `yaml:"loss"`                              // per request type
}

// Loss is the loss probability of each request type.
type Loss struct {
	Pop    LossPair `yaml:"pop"`
	Ack    LossPair `yaml:"ack"`
	Change LossPair `yaml:"change"` // changeInvisibleTime
	Pull   LossPair `yaml:"pull"`
}

// LossPair: the request lost before the broker, or its response lost after
// the broker acted on it. Each at most 50%.
type LossPair struct {
	Request  PPM `yaml:"request" range:"0..0.5"`
	Response PPM `yaml:"response" range:"0..0.5"`
}

// Faults are the injected faults of the safety phase. Each family is
// configured by how often it strikes (a mean interval of an exponential
// clock, per consumer or for the broker) or by a probability; a family
// left out is off. These are the faults' weights: with swarm on, each seed
// also turns whole families off and rescales the rest.
type Faults struct {
	Swarm            bool          `yaml:"swarm"`      // per seed: families off at random, very different weights for the rest
	SiteEnable       PPM           `yaml:"siteEnable"` // two-level activation: each configured site is on for a run with this probability (default 1)
	Crash            Crash         `yaml:"crash"`
	Pause            Pause         `yaml:"pause"`
	Slow             Slow          `yaml:"slow"`
	Renew            Renew         `yaml:"renew"`
	BrokerRestart    BrokerRestart `yaml:"brokerRestart"`
	RevivePutFailure PPM           `yaml:"revivePutFailure"`         // retry-topic writes that fail during revive
	ClockSkew        Duration      `yaml:"clockSkew" range:"0s..1h"` // each consumer's clock is off by up to ± this
}

// Crash: a consumer loses its local state and buffered work.
type Crash struct {
	Every        Duration `yaml:"every" range:"100ms..8760h"` // mean time between crashes of one consumer
	RestartDelay Dist     `yaml:"restartDelay"`               // default uniform(1s,5s)
}

// Pause: a stop-the-world pause (GC) of one consumer.
type Pause struct {
	Every    Duration `yaml:"every" range:"100ms..8760h"`
	Duration Dist     `yaml:"duration"` // default uniform(50ms,2s)
}

// Slow: an episode during which a consumer's processing is Factor times
// slower.
type Slow struct {
	Every    Duration `yaml:"every" range:"100ms..8760h"`
	Duration Dist     `yaml:"duration"`               // default uniform(1s,10s)
	Factor   int64    `yaml:"factor" range:"2..1000"` // default 10
}

// Renew: renewals (changeInvisibleTime) injected at chosen moments, as a
// probability per delivered message of a pop-push or simple consumer.
type Renew struct {
	SameDeadline PPM `yaml:"sameDeadline"` // a renewal that keeps the same deadline (apache/rocketmq#10276)
	AtExpiry     PPM `yaml:"atExpiry"`     // a renewal reaching the broker exactly at expiry
	AfterRevive  PPM `yaml:"afterRevive"`  // a late renewal with an old handle after the message was revived
}

// BrokerRestart: the broker loses its volatile state (cache, polling).
type BrokerRestart struct {
	Every Duration `yaml:"every" range:"100ms..8760h"`
}
