package pop

import (
	"fmt"

	"popsim/model"
)

// Leases. Every in-flight record the broker creates (a pop's, a renewal's,
// a failed revive's backoff re-insert) is a lease with its own
// model.LeaseID: 1, 2, 3 … in creation order, never reused, not even across
// Restart (the counter is durable). The record keeps its lease wherever it
// lives (store or cache), and every result names the leases the call made
// and ended, so nobody has to guess which record an operation touched.

// LeasedRecord is an in-flight record with its lease.
type LeasedRecord struct {
	Lease  model.LeaseID
	Record model.PopConsumerRecord
}

// leaseCounter is the last lease id granted by the brokers that share it.
type leaseCounter struct{ last model.LeaseID }

// ShareLeaseIDs makes b draw its lease ids from the counter of with, so
// that the brokers of one cluster grant ids 1, 2, 3, ... between them and
// an id names one lease of the whole cluster (the simulator's checker
// keeps a dense window of lease ids). Call it before b grants any lease.
// Each broker still checks its own leases against the shared last id.
func (b *Broker) ShareLeaseIDs(with *Broker) error {
	if b.lease.last != 0 {
		return fmt.Errorf("pop: ShareLeaseIDs: broker %s has granted leases already (last %d)", b.cfg.BrokerName, b.lease.last)
	}
	b.lease = with.lease
	return nil
}

// newLease grants the next lease id.
func (b *Broker) newLease() model.LeaseID {
	b.lease.last++
	return b.lease.last
}
