//go:build !invariants

package sim

// Without the invariants build tag the loop checks no engine invariant.
const (
	invariantsOn    = false
	invariantsEvery = 1
)

func (s *sim) checkEngine() {}
