//go:build !invariants

package pop

// invariants is false without the invariants build tag: the assert* calls,
// each behind `if invariants`, compile away.
const invariants = false
