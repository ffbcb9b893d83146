package scenarios

import (
	"regexp"
	"strings"
	"testing"
)

// TestBuiltinsLoad loads and validates every built-in scenario, and checks
// the conventions `popsim list` relies on.
func TestBuiltinsLoad(t *testing.T) {
	names := Names()
	if len(names) == 0 || names[0] != "default" {
		t.Fatalf("Names() = %v: want default first", names)
	}
	for _, name := range names {
		s, err := Builtin(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.Name != name {
			t.Errorf("builtin/%s.yaml is named %q", name, s.Name)
		}
		if s.Summary() == "" || len(s.Summary()) > 120 {
			t.Errorf("%s: the first description line (popsim list) is %d characters: want 1..120", name, len(s.Summary()))
		}
		if !strings.HasSuffix(s.Summary(), ".") {
			t.Errorf("%s: the first description line (popsim list) %q is not a sentence: want a one-line summary ending with a full stop", name, s.Summary())
		}
		if !strings.HasPrefix(string(s.Text), "#") {
			t.Errorf("%s: the file does not start with a comment explaining it", name)
		}
		c := s.Config(s.Seed)
		if err := c.Validate(); err != nil {
			t.Errorf("%s: sim rejects it: %v", name, err)
		}
		// Every RocketMQ built-in names the POP path it runs, and says why
		// in a comment (the default is the checkpoint path). The peers-*
		// scenarios run any engine (-param engine=) on each system's own
		// defaults, RocketMQ's path included.
		if !strings.HasPrefix(name, "peers-") && !regexp.MustCompile(`(?m)^  popConsumerKVServiceEnable: (true|false)`).Match(s.Text) {
			t.Errorf("%s: the engine section does not state its path (popConsumerKVServiceEnable)", name)
		}
	}
	if _, err := Builtin("no-such"); err == nil || !strings.Contains(err.Error(), "default") {
		t.Errorf("unknown builtin: %v", err)
	}
	if _, err := BuiltinText("../builtin/default"); err == nil {
		t.Error("BuiltinText accepted a path")
	}
}
