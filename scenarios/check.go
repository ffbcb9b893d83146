package scenarios

import (
	"fmt"
	"strings"
)

// check validates what the field decoder cannot see alone: required
// fields, names, references between sections and relations between
// fields.
func (s *Scenario) check() error {
	for _, f := range []func() error{s.checkHeader, s.checkTopics, s.checkGroups, s.checkProducers, s.checkConsumers, s.checkEngine, s.checkSim} {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
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
	if s.Warmup >= s.Duration {
		return s.errAt("warmup", "%s out of range: want less than duration (%s)", s.Warmup, s.Duration)
	}
	return nil
}

func (s *Scenario) checkTopics() error {
	if len(s.Topics) == 0 {
		return s.errAt("topics", "missing: want at least one topic, e.g. topics: [{name: orders, queues: 8}]")
	}
	seen := map[string]bool{}
	for i, t := range s.Topics {
		p := fmt.Sprintf("topics[%d].name", i)
		if err := validName("topic", t.Name); err != nil {
			return s.errAt(p, "%v", strings.TrimPrefix(err.Error(), "model: "))
		}
		if strings.HasPrefix(t.Name, "%") {
			return s.errAt(p, "%q: names starting with %% are RocketMQ's system topics (%%RETRY%%, %%DLQ%%)", t.Name)
		}
		if seen[t.Name] {
			return s.errAt(p, "topic %q defined twice", t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

func (s *Scenario) checkGroups() error {
	seen := map[string]bool{}
	for i, g := range s.Groups {
		p := fmt.Sprintf("groups[%d].name", i)
		if err := validName("group", g.Name); err != nil {
			return s.errAt(p, "%v", strings.TrimPrefix(err.Error(), "model: "))
		}
		if seen[g.Name] {
			return s.errAt(p, "group %q defined twice", g.Name)
		}
		seen[g.Name] = true
	}
	return nil
}

func (s *Scenario) checkProducers() error {
	if len(s.Producers) == 0 {
		return s.errAt("producers", "missing: want at least one producer, e.g. producers: [{topic: orders, arrivals: poisson(1000/s)}]")
	}
	for i, p := range s.Producers {
		if err := s.checkTopicRef(fmt.Sprintf("producers[%d].topic", i), p.Topic); err != nil {
			return err
		}
		if p.Arrivals.text == "" {
			return s.errAt(fmt.Sprintf("producers[%d]", i), "arrivals missing: want an arrival process such as poisson(1000/s)")
		}
	}
	return nil
}

func (s *Scenario) checkTopicRef(path, name string) error {
	for _, t := range s.Topics {
		if t.Name == name {
			return nil
		}
	}
	return s.errAt(path, "topic %q is not defined: want one of %s", name, strings.Join(s.topicNames(), ", "))
}

func (s *Scenario) topicNames() []string {
	var names []string
	for _, t := range s.Topics {
		names = append(names, t.Name)
	}
	return names
}

func (s *Scenario) checkConsumers() error {
	if len(s.Consumers) == 0 {
		return s.errAt("consumers", "missing: want at least one consumer, e.g. consumers: [{kind: pop-push, group: g, topic: orders}]")
	}
	for i, c := range s.Consumers {
		p := fmt.Sprintf("consumers[%d]", i)
		switch c.Kind {
		case KindPopPush, KindSimple, KindPull:
		default:
			return s.errAt(p+".kind", "%q: want %s, %s or %s", c.Kind, KindPopPush, KindSimple, KindPull)
		}
		if err := s.checkTopicRef(p+".topic", c.Topic); err != nil {
			return err
		}
		if !s.hasGroup(c.Group) {
			var names []string
			for _, g := range s.Groups {
				names = append(names, g.Name)
			}
			return s.errAt(p+".group", "group %q is not defined under groups: (defined: %s)", c.Group, orNone(strings.Join(names, ", ")))
		}
		if c.AutoRenew && c.Kind != KindSimple {
			return s.errAt(p+".autoRenew", "only simple consumers renew automatically (the proxy does it): this one is %s", c.Kind)
		}
	}
	return nil
}

func (s *Scenario) hasGroup(name string) bool {
	for _, g := range s.Groups {
		if g.Name == name {
			return true
		}
	}
	return false
}

func (s *Scenario) checkEngine() error {
	cfg := s.Engine.Config()
	if err := cfg.Validate(); err != nil {
		msg := strings.TrimPrefix(err.Error(), "pop: config ")
		field, _, _ := strings.Cut(msg, " ")
		return s.errAt("engine."+field, "%s", msg)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
