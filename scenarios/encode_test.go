package scenarios

import (
	"reflect"
	"strings"
	"testing"
)

// The effective configuration of every built-in loads back to the same
// configuration and prints the same.
func TestEffectiveRoundTrips(t *testing.T) {
	for _, name := range Names() {
		s, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		text, err := s.Effective()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Load("effective.yaml", text)
		if err != nil {
			t.Fatalf("%s: the effective configuration does not load: %v\n%s", name, err, text)
		}
		// Both with defaults: the hash keeps a group's retryMaxTimes as written.
		a, b := s.Config(s.Seed).WithDefaults(), back.Config(back.Seed).WithDefaults()
		if a.SHA256() != b.SHA256() || !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the effective configuration is another configuration", name)
		}
		again, err := back.Effective()
		if err != nil || string(again) != string(text) {
			t.Errorf("%s: printing the effective configuration twice differs (%v)", name, err)
		}
		if !reflect.DeepEqual(s.Seeds.List(), back.Seeds.List()) {
			t.Errorf("%s: seeds %v, then %v", name, s.Seeds.List(), back.Seeds.List())
		}
	}
	s := mustLoad(t, minimal, Override{"consumers[0].batch", "4"})
	text, _ := s.Effective()
	for _, want := range []string{"batch: 4\n", "invisibleTime: 30s\n", "pollTime: 15s\n", "kind: rocketmq\n", "threads: 20\n", "queues: 4\n"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("effective configuration lacks %q:\n%s", want, text)
		}
	}
}

// Sweep parameter values are kept in their canonical text form.
func TestParamValuesAreCanonical(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"invisible=10000ms,1m", "10s,1m"},
		{"consumers=08,16", "8,16"},
		{"duration=90s", "90s"},
		{"processing=exp(5ms),uniform(1ms,5ms)", "exp(5ms),uniform(1ms,5ms)"},
		{"rate=1000/s", "1000/s"},
		{"kind=pull,simple", "pull,simple"},
		{"engine.popCkStayBufferTime=10s", "10000"},
		{"faults.revivePutFailure=0.01", "1%"},
		{"path=kv,checkpoint", "kv,checkpoint"},
	} {
		p, err := ParseParam(c.in)
		if err != nil {
			t.Errorf("ParseParam(%q): %v", c.in, err)
			continue
		}
		if got := strings.Join(p.Values, ","); got != c.want {
			t.Errorf("ParseParam(%q) values %q, want %q", c.in, got, c.want)
		}
	}
	if _, err := ParseParam("invisible=10s,10000ms"); err == nil {
		t.Error("ParseParam accepted one value twice in two spellings")
	}
}

// The path alias sets popConsumerKVServiceEnable as RocketMQ reads it, and
// takes only its two words.
func TestPathParam(t *testing.T) {
	for w, want := range map[string]bool{"kv": true, "checkpoint": false} {
		o, err := ParamOverride("path", w)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Builtin("default", o)
		if err != nil {
			t.Fatal(err)
		}
		if cfg := s.Engine.RocketMQ(); cfg.UsesKV() != want {
			t.Errorf("path=%s: popConsumerKVServiceEnable %v, want %v", w, cfg.UsesKV(), want)
		}
	}
	if _, err := ParseParam("path=kv,fs"); err == nil || !strings.Contains(err.Error(), "checkpoint or kv") {
		t.Errorf("path=fs: %v", err)
	}
}

// The brokers alias sets broker.count, checked like a written value.
func TestBrokersParam(t *testing.T) {
	o, err := ParamOverride("brokers", "3")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Builtin("broker-bottleneck", o)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Config(1).Broker.Count; n != 3 {
		t.Errorf("brokers=3: broker.count %d", n)
	}
	o, _ = ParamOverride("brokers", "65")
	if _, err := Builtin("broker-bottleneck", o); err == nil || !strings.Contains(err.Error(), "broker.count") {
		t.Errorf("brokers=65: %v, want an error naming broker.count", err)
	}
}
