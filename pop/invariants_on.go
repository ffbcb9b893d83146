//go:build invariants

package pop

// With the invariants build tag the broker asserts cheap rules of its own
// as it works (assert*), besides the structural CheckInvariants a driver
// calls: a broken rule panics at the call that broke it.
const invariants = true
