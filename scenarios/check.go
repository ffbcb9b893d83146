package scenarios

import (
	"errors"
	"fmt"

	"popsim/sim"
)

// check validates what the decoder cannot see alone: the scenario's own
// header, then the simulation with the simulator's validation, whose
// field errors it places at the lines their keys were written.
func (s *Scenario) check() error {
	if err := s.checkHeader(); err != nil {
		return err
	}
	return s.checkSim()
}

func (s *Scenario) checkHeader() error {
	if s.Name == "" {
		return s.errAt("name", "missing: every scenario needs a name of lowercase letters, digits and '-'")
	}
	if !scenarioNameRE.MatchString(s.Name) {
		return s.errAt("name", "%q: want 1 to 63 lowercase letters, digits and '-', starting with a letter or digit", s.Name)
	}
	if len(s.Seeds.list) == 0 {
		s.Seeds = Seeds{text: fmt.Sprint(s.Seed), list: []uint64{s.Seed}}
	}
	return nil
}

// checkSim runs sim.Config.Validate and reports each field error at its
// line: one *FieldError, or an ErrorList of them.
func (s *Scenario) checkSim() error {
	err := s.Spec.Config.Validate()
	if err == nil {
		return nil
	}
	var ce *sim.ConfigError
	if !errors.As(err, &ce) {
		return &FieldError{Source: s.Source, Msg: err.Error()}
	}
	var list ErrorList
	for _, f := range ce.Fields {
		msg := f.Msg
		if f.Want != "" {
			msg += ": want " + f.Want
		}
		list = append(list, s.errAt(f.Path, "%s", msg))
	}
	if len(list) == 1 {
		return list[0]
	}
	return list
}
