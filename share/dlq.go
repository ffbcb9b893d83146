package share

import (
	"strconv"

	"popsim/clock"
	"popsim/model"
)

// Context headers of a dead-letter copy. KIP-1191 gives DLQ records context
// headers; these key names are the engine's own (docs/share.md).
const (
	HeaderDLQGroup         = "__dlq.errors.group.id"
	HeaderDLQTopic         = "__dlq.errors.topic"
	HeaderDLQPartition     = "__dlq.errors.partition"
	HeaderDLQOffset        = "__dlq.errors.offset"
	HeaderDLQDeliveryCount = "__dlq.errors.delivery.count"
	HeaderDLQReason        = "__dlq.errors.reason"
)

// deadLetter copies an archived record onto the group's dead-letter topic
// (KIP-1191) and returns the copy, or nil when the group has none or the
// topic does not exist (auto-creation is off by default). The copy keeps
// the simulator's message ID and UniqKey; without
// errors.deadletterqueue.copy.record.enable it carries no body, keys, tags
// or properties, only the context headers. It goes to the partition with
// the source partition's number modulo the topic's partition count.
func (b *Broker) deadLetter(now clock.Time, k spKey, off int64, m *model.Message, count int32, end LeaseEnd) *model.Message {
	gc := b.GroupConfig(k.group)
	if gc.DeadLetterTopic == "" || m == nil {
		return nil
	}
	t := b.topics[gc.DeadLetterTopic]
	if t == nil {
		b.stats.DLQFailures++
		return nil
	}
	c := m.Clone()
	if !gc.DeadLetterCopyRecord {
		c.Body, c.Keys, c.Tags, c.Properties = nil, "", "", nil
	}
	reason := "delivery-limit"
	if end == EndRejected {
		reason = "rejected"
	}
	for _, h := range [][2]string{
		{HeaderDLQGroup, k.group}, {HeaderDLQTopic, k.Topic}, {HeaderDLQPartition, strconv.Itoa(int(k.Partition))},
		{HeaderDLQOffset, strconv.FormatInt(off, 10)}, {HeaderDLQDeliveryCount, strconv.Itoa(int(count))}, {HeaderDLQReason, reason},
	} {
		if err := c.SetProperty(h[0], h[1]); err != nil {
			panic("share: internal: " + err.Error())
		}
	}
	part := k.Partition % int32(len(t.parts))
	appendBatch(now, t.parts[part], TopicPartition{t.name, part}, []*model.Message{c})
	b.stats.DLQCopies++
	return c
}
