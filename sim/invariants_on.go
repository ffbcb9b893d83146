//go:build invariants

package sim

import "fmt"

// With the invariants build tag (go test -tags invariants ./sim/...), the
// loop runs the engine's structural self-check every invariantsEvery
// dispatched tasks and at each phase change, and panics, naming the task
// and the virtual time, at the first broken rule. The engines assert their
// own cheap rules under the same tag.
const (
	invariantsOn    = true
	invariantsEvery = 256
)

func (s *sim) checkEngine() {
	if err := s.eng.CheckInvariants(); err != nil {
		panic(fmt.Sprintf("sim: engine invariant broken after task %d at %v (seed %d): %v", s.q.dispatched, s.q.now().Sub(s.start).Std(), s.cfg.Seed, err))
	}
}
