package pop

import "popsim/model"

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

// newLease grants the next lease id.
func (b *Broker) newLease() model.LeaseID {
	b.lastLease++
	return b.lastLease
}
