package sim

import (
	"fmt"

	"popsim/clock"
	"popsim/model"
	"popsim/pop"
)

// rocketCluster is the rocketmq engine with several brokers
// (broker.count > 1): one RocketMQ adapter per broker, each with its own
// pop.Broker (named broker-a, broker-b, ...), timers and parked requests.
// Lease ids are drawn from one counter, so the trace's leases stay dense.
// A request goes to the broker its client chose: a pop or a pull to the
// broker of its queue (route.go), an ack or a renewal to the broker its
// receipt handle names. Events are traced in the cluster's queue numbers.
type rocketCluster struct {
	bs []*rocketMQ
}

func newRocketCluster(s *sim, cfg pop.Config) (*rocketCluster, error) {
	c := &rocketCluster{}
	for b := range s.rt.n {
		a, err := newRocketMQ(s, cfg, b)
		if err != nil {
			return nil, err
		}
		if b > 0 {
			if err := a.b.ShareLeaseIDs(c.bs[0].b); err != nil {
				return nil, err
			}
		}
		c.bs = append(c.bs, a)
	}
	return c, nil
}

func (c *rocketCluster) Start(now clock.Time, out *Outcome) {
	for _, a := range c.bs {
		a.Start(now, out)
	}
}

// Store puts the message on the broker of its queue, at its queue there.
// storesCopies: every broker stores copies (rocketMQ.storesCopies).
func (*rocketCluster) storesCopies() bool { return true }

func (c *rocketCluster) Store(now clock.Time, producer int32, m *model.Message, out *Outcome) bool {
	b, q := c.bs[0].rt.split(m.Topic, m.QueueID)
	m.QueueID = q
	return c.bs[b].Store(now, producer, m, out)
}

func (c *rocketCluster) Serve(now clock.Time, r Request, out *Outcome) {
	c.bs[r.base().broker].Serve(now, r, out)
}

func (c *rocketCluster) Tick(now clock.Time, timer int32, out *Outcome) {
	c.bs[timer/rmqTimers].Tick(now, timer%rmqTimers, out)
}

func (c *rocketCluster) Disconnect(now clock.Time, client *consumer, out *Outcome) {
	for _, a := range c.bs {
		a.Disconnect(now, client, out)
	}
}

// Restart restarts every broker (the engine-wide restart; a fault
// restarts one, RestartBroker).
func (c *rocketCluster) Restart(now clock.Time, out *Outcome) {
	for _, a := range c.bs {
		a.Restart(now, out)
	}
}

// Stop stops and starts every broker gracefully.
func (c *rocketCluster) Stop(now clock.Time, out *Outcome) {
	for _, a := range c.bs {
		a.Stop(now, out)
	}
}

// RestartBroker and StopBroker hit broker b alone: only its queues, its
// parked requests and its in-flight state are affected.
func (c *rocketCluster) RestartBroker(now clock.Time, b int32, out *Outcome) {
	c.bs[b].Restart(now, out)
}
func (c *rocketCluster) StopBroker(now clock.Time, b int32, out *Outcome) { c.bs[b].Stop(now, out) }

func (c *rocketCluster) SetFaults(f EngineFaults) {
	for _, a := range c.bs {
		a.SetFaults(f)
	}
}

func (c *rocketCluster) Status(positions bool, dst []Position) (int, []Position) {
	dst = dst[:0]
	n := 0
	for _, a := range c.bs {
		var k int
		k, dst = a.status(positions, dst)
		n += k
	}
	return n, dst
}

func (c *rocketCluster) CheckInvariants() error {
	for _, a := range c.bs {
		if err := a.CheckInvariants(); err != nil {
			return fmt.Errorf("%s: %w", a.rt.names[a.idx], err)
		}
	}
	return nil
}

// SettleTime is the longest of the brokers'.
func (c *rocketCluster) SettleTime() clock.Duration {
	var d clock.Duration
	for _, a := range c.bs {
		d = max(d, a.SettleTime())
	}
	return d
}

// Counters add up the brokers' counters.
func (c *rocketCluster) Counters() map[string]int64 {
	sum := c.bs[0].Counters()
	for _, a := range c.bs[1:] {
		for k, v := range a.Counters() {
			sum[k] += v
		}
	}
	return sum
}

// engineOfBroker is broker b's own engine (its counters and pop locks for
// its cost model).
func (c *rocketCluster) engineOfBroker(b int32) Engine { return c.bs[b] }
