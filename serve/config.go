package serve

import (
	"fmt"
	"strconv"
	"strings"

	"popsim/model"
	"popsim/pop"
	"popsim/proxy"
)

// Engine paths (RocketMQ's popConsumerKVServiceEnable chooses between them).
const (
	PathKV         = "kv"
	PathCheckpoint = "checkpoint"
)

// Config is what a server needs to start.
type Config struct {
	// Addr is the listen address, host:port ("127.0.0.1:0" picks a port).
	Addr string
	// Advertise is the host:port the routes name. Empty: the host the
	// client dialed (its access point) with the listening port, as the
	// proxy does by default.
	Advertise string
	// Path is the engine's POP path, RocketMQ's popConsumerKVServiceEnable:
	// PathCheckpoint (the default, as a stock RocketMQ 5 broker's) or
	// PathKV. It overrides Broker.PopConsumerKVServiceEnable.
	Path string
	// Topics are created at start, each with as many read and write queues
	// as it says; the routes offer exactly these topics.
	Topics []TopicSpec
	// Groups are created at start with RocketMQ's defaults. Other groups are
	// created on first use, as a broker with autoCreateSubscriptionGroup
	// (its default) does.
	Groups []string
	// Broker is the engine's configuration (pop.DefaultConfig, RocketMQ's
	// broker defaults; Path decides popConsumerKVServiceEnable).
	Broker pop.Config
	// Proxy is the proxy's configuration (proxy.DefaultConfig by default):
	// the receive's invisible-time and polling limits, auto-renew.
	Proxy proxy.Config
	// Plaintext serves without TLS. The official clients always dial TLS,
	// so they need a patched connection constructor to use it.
	Plaintext bool
	// Faults are the faults in force at start (SetFaults changes them).
	Faults Faults
	// Logf receives one line per notable event (start, restart, fault
	// changes); nil discards them.
	Logf func(format string, args ...any)
}

// TopicSpec is one topic of the server.
type TopicSpec struct {
	Name   string
	Queues int32
}

// DefaultConfig serves topic TopicTest (4 queues) and group GroupTest on
// 127.0.0.1:8081 with RocketMQ's broker defaults, the checkpoint path
// among them: what a client meets on a stock RocketMQ 5 broker, which
// enables the KV path only when popConsumerKVServiceEnable is set.
func DefaultConfig() Config {
	return Config{
		Addr:   "127.0.0.1:8081",
		Path:   PathCheckpoint,
		Topics: []TopicSpec{{Name: "TopicTest", Queues: 4}},
		Groups: []string{"GroupTest"},
		Broker: pop.DefaultConfig(),
		Proxy:  proxy.DefaultConfig(),
	}
}

// maxQueues bounds a topic's queue count (RocketMQ's defaultTopicQueueNums
// is 8; a few hundred is plenty for a test server).
const maxQueues = 1024

// Validate reports the first setting that cannot work, naming it and what
// is allowed.
func (c *Config) Validate() error {
	if c.Addr == "" {
		return fmt.Errorf("serve: addr is empty: want host:port, e.g. 127.0.0.1:8081")
	}
	switch c.Path {
	case PathKV, PathCheckpoint:
	default:
		return fmt.Errorf("serve: path %q: want %q (RocketMQ's default) or %q", c.Path, PathCheckpoint, PathKV)
	}
	if len(c.Topics) == 0 {
		return fmt.Errorf("serve: no topics: want at least one, e.g. TopicTest:4")
	}
	seen := map[string]bool{}
	for _, t := range c.Topics {
		if err := validateTopicName(t.Name); err != nil {
			return err
		}
		if t.Queues < 1 || t.Queues > maxQueues {
			return fmt.Errorf("serve: topic %s: %d queues: want 1..%d", t.Name, t.Queues, maxQueues)
		}
		if seen[t.Name] {
			return fmt.Errorf("serve: topic %s is listed twice", t.Name)
		}
		seen[t.Name] = true
	}
	for _, g := range c.Groups {
		if err := validateGroupName(g); err != nil {
			return err
		}
	}
	if err := c.Broker.Validate(); err != nil {
		return err
	}
	if err := c.Proxy.Validate(); err != nil {
		return err
	}
	return c.Faults.Validate()
}

func validateTopicName(name string) error {
	if err := model.ValidateTopic(name); err != nil {
		return fmt.Errorf("serve: %v", err)
	}
	if model.IsRetryTopic(name) || strings.HasPrefix(name, "%DLQ%") {
		return fmt.Errorf("serve: topic %q is a system topic: want a plain topic name", name)
	}
	return nil
}

func validateGroupName(name string) error {
	if err := model.ValidateGroup(name, model.MaxGroupLength); err != nil {
		return fmt.Errorf("serve: %v", err)
	}
	return nil
}

// ParseTopics reads "name:queues,name2:queues2"; a name without ":n" gets 4
// queues (the proxy's default for auto-created topics).
func ParseTopics(s string) ([]TopicSpec, error) {
	var out []TopicSpec
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, n, found := strings.Cut(part, ":")
		spec := TopicSpec{Name: strings.TrimSpace(name), Queues: 4}
		if found {
			q, err := strconv.ParseInt(strings.TrimSpace(n), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("serve: topic %q: queue count %q is not a number: want name:queues, e.g. orders:4", part, n)
			}
			spec.Queues = int32(q)
		}
		out = append(out, spec)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("serve: no topics in %q: want name:queues[,name:queues], e.g. orders:4", s)
	}
	return out, nil
}

// ParseList reads a comma-separated list, dropping blanks.
func ParseList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
