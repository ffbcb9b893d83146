package model

// BrokerUsage is how busy the broker was when the run had a broker cost
// model (sim.BrokerSpec, docs/calibration.md): its cores, each request
// thread pool, and the delays requests met at the broker. Figures cover
// the safety phase: requests whose service started in it, busy time
// within it.
type BrokerUsage struct {
	Cores int `json:"cores"`
	// Utilization is the cores' busy time over cores × the safety phase
	// (0..1); Background the part of it spent in the broker's periodic
	// work (revive, timer and buffer scans, cache cleanup).
	Utilization float64     `json:"utilization"`
	Background  float64     `json:"background"`
	Pools       []PoolUsage `json:"pools"`
	// QueueDelay is every request's wait at the broker: from its arrival
	// to the start of its service (for a thread of its pool, the pop lock,
	// a core); Service its service time. µs.
	QueueDelay Latency `json:"queue_delay"`
	Service    Latency `json:"service"`
	// LockWaits counts pops that found their pop lock held by a pop in
	// service and waited for it; LockWait is their wait for the lock.
	LockWaits int64   `json:"lock_waits"`
	LockWait  Latency `json:"lock_wait"`
	// Brokers is each broker's own usage when there are several (the
	// fields above then add them up: cores and threads summed, utilisation
	// over all cores, latencies over every broker's requests).
	Brokers []BrokerUsage `json:"brokers,omitempty"`
}

// PoolUsage is one of the broker's request thread pools: the requests it
// served, its threads' busy time over threads × the safety phase (a
// thread is busy while its request waits for a core or the pop lock and
// while it is served), and its requests' queueing and service.
type PoolUsage struct {
	Name        string  `json:"name"` // RocketMQ's executor, e.g. pullMessageExecutor
	Threads     int     `json:"threads"`
	Requests    int64   `json:"requests"`
	Utilization float64 `json:"utilization"`
	QueueDelay  Latency `json:"queue_delay"`
	Service     Latency `json:"service"`
}
