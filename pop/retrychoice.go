package pop

import "fmt"

// The retry-versus-normal read choice of a non-FIFO pop and the order in
// which an all-queue pop visits a topic's queues (docs/rocketmq/kv-path.md
// §4, checkpoint-path.md §3), as RocketMQ 5.4 makes them:
//
//   - Priority mode: on a topic whose message.type is PRIORITY, a request
//     whose draw (KV: requestCount % 100; FS: randomQ) is below the group's
//     priority.factor reads in priority mode: the retry probability is
//     popFromRetryProbabilityForPriority and the scan starts at rotation 0.
//   - Retry first, KV: with p the probability clamped to 0..100, a request
//     reads the retry topics first when p > 0 and requestCount % (100 / p)
//     is 0 (any p of 51..100 is every request). FS: when randomQ < p.
//   - Scan: visit i of n goes to queue ((n-1-i) + r) % n when
//     priorityOrderAsc (queue n-1 first, descending: queue 0 is the lowest
//     priority), (i + r) % n otherwise, r being the rotation (KV: the
//     requestCount; FS: randomQ).
//
// Older releases choose differently (Config.RetryChoiceRelease).

// TopicMessageTypePriority is the message.type attribute value of a
// priority topic (TopicMessageType.PRIORITY, RocketMQ 5.4).
const TopicMessageTypePriority = "PRIORITY"

// topicMessageTypes are the values of the message.type topic attribute
// (TopicMessageType); "" is UNSPECIFIED, the default.
var topicMessageTypes = []string{"", "UNSPECIFIED", "NORMAL", "FIFO", "DELAY", "TRANSACTION", "MIXED", TopicMessageTypePriority}

// validTopicMessageType reports whether v is a message.type value.
func validTopicMessageType(v string) bool {
	for _, t := range topicMessageTypes {
		if v == t {
			return true
		}
	}
	return false
}

// Retry choices of older releases (Config.RetryChoiceRelease).
const (
	// RetryChoice531: 5.3.1 to 5.3.x. KV: every 5th request
	// (requestCount % 5 == 0) reads the retry topics first whatever
	// popFromRetryProbability says; FS: randomQ < popFromRetryProbability.
	// No priority mode; scans ascend from the rotation.
	RetryChoice531 = "5.3.1"
	// RetryChoice514: before 5.3.1 (no popFromRetryProbability). FS:
	// randomQ % 5 == 0; scans ascend from the rotation.
	RetryChoice514 = "5.1.4"
)

// validateRetryChoice checks Config.RetryChoiceRelease.
func (c *Config) validateRetryChoice() error {
	switch c.RetryChoiceRelease {
	case "", RetryChoice531, RetryChoice514:
		return nil
	}
	return &ConfigError{Key: "retryChoiceRelease", Msg: fmt.Sprintf("%q unknown", c.RetryChoiceRelease),
		Want: `"" (5.4.0 on), "` + RetryChoice531 + `" or "` + RetryChoice514 + `"`}
}

// priorityMode reports whether a request with draw d (KV: requestCount %
// 100, FS: randomQ) on topic t for group g reads in priority mode.
func (b *Broker) priorityMode(t *topic, g *GroupConfig, d int64) bool {
	return b.cfg.RetryChoiceRelease == "" && t.cfg.MessageType == TopicMessageTypePriority && g != nil && d < g.PriorityFactor
}

// kvRetryChoice is popAsync's choice for a non-FIFO request numbered n
// (requestCount) on topic t: whether it reads the retry topics first, and
// the rotation its scan starts from.
func (b *Broker) kvRetryChoice(t *topic, g *GroupConfig, n int64) (preferRetry bool, rotation int64) {
	if b.cfg.RetryChoiceRelease != "" {
		return n%5 == 0, n
	}
	p := b.cfg.PopFromRetryProbability
	prio := b.priorityMode(t, g, n%100)
	if prio {
		p = b.cfg.PopFromRetryProbabilityForPriority
	}
	p = min(max(p, 0), 100)
	preferRetry = p > 0 && n%int64(100/p) == 0
	if prio {
		return preferRetry, 0
	}
	return preferRetry, n
}

// ckRetryChoice is processRequest's choice for a non-FIFO request with
// draw randomQ on topic t: whether it reads the retry topic first, and the
// rotation its scan starts from.
func (b *Broker) ckRetryChoice(t *topic, g *GroupConfig, randomQ int32) (needRetry bool, rotation int32) {
	switch b.cfg.RetryChoiceRelease {
	case RetryChoice514:
		return randomQ%5 == 0, randomQ
	case RetryChoice531:
		return randomQ < b.cfg.PopFromRetryProbability, randomQ
	}
	if b.priorityMode(t, g, int64(randomQ)) {
		return randomQ < b.cfg.PopFromRetryProbabilityForPriority, 0
	}
	return randomQ < b.cfg.PopFromRetryProbability, randomQ
}

// scanQueue is the queue visit i (0..n-1) of an all-queue scan of n
// queues from rotation r goes to.
func (b *Broker) scanQueue(n int32, r int64, i int32) int32 {
	idx := int64(i)
	if b.scanDescending() {
		idx = int64(n - 1 - i)
	}
	return int32((idx + r) % int64(n))
}

// scanDescending reports that scanQueue walks the queues downwards.
func (b *Broker) scanDescending() bool {
	return b.cfg.PriorityOrderAsc && b.cfg.RetryChoiceRelease == ""
}
