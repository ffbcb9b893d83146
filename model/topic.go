package model

import (
	"fmt"
	"strings"
)

// Topic-name prefixes and system names (MixAll, KeyBuilder, PopAckConstants).
const (
	RetryGroupTopicPrefix = "%RETRY%"
	DLQGroupTopicPrefix   = "%DLQ%"
	// PopOrderReviveQueue (999) in a receipt handle's reviveQid marks FIFO.
	PopOrderReviveQueue = 999
	// MaxNameLength is RocketMQ's topic-name limit (TOPIC_MAX_LENGTH).
	MaxNameLength = 127
)

// BuildPopRetryTopicV1 is KeyBuilder.buildPopRetryTopicV1(topic, group):
// the POP retry topic `%RETRY%<group>_<topic>`. The arguments are in
// KeyBuilder's order, topic first, although the name puts the group first.
func BuildPopRetryTopicV1(topic, group string) string {
	return RetryGroupTopicPrefix + group + "_" + topic
}

// BuildPopRetryTopicV2 is KeyBuilder.buildPopRetryTopicV2(topic, group):
// `%RETRY%<group>+<topic>`.
func BuildPopRetryTopicV2(topic, group string) string {
	return RetryGroupTopicPrefix + group + "+" + topic
}

// BuildPopRetryTopic is KeyBuilder.buildPopRetryTopic(topic, group,
// enableRetryV2): V2 when v2, else V1.
func BuildPopRetryTopic(topic, group string, v2 bool) string {
	if v2 {
		return BuildPopRetryTopicV2(topic, group)
	}
	return BuildPopRetryTopicV1(topic, group)
}

// DLQTopic is the dead-letter topic `%DLQ%<group>`.
func DLQTopic(group string) string { return DLQGroupTopicPrefix + group }

// IsRetryTopic reports whether t starts with %RETRY%.
func IsRetryTopic(t string) bool { return strings.HasPrefix(t, RetryGroupTopicPrefix) }

// IsDLQTopic reports whether t starts with %DLQ%.
func IsDLQTopic(t string) bool { return strings.HasPrefix(t, DLQGroupTopicPrefix) }

// IsPopRetryTopicV2 reports whether t is a V2 POP retry topic: it starts
// with %RETRY% and contains '+'.
func IsPopRetryTopicV2(t string) bool {
	return IsRetryTopic(t) && strings.Contains(t, "+")
}

// ParseNormalTopic maps a POP retry topic of group g back to its normal
// topic, as KeyBuilder.parseNormalTopic(topic, group) does: it strips
// `%RETRY%g+` when present, otherwise the length of `%RETRY%g_` without
// checking the characters (upstream's behaviour). Non-retry topics pass
// through unchanged. A retry topic too short to strip returns "".
func ParseNormalTopic(t, g string) string {
	if !IsRetryTopic(t) {
		return t
	}
	if p := BuildPopRetryTopicV2("", g); strings.HasPrefix(t, p) {
		return t[len(p):]
	}
	n := len(BuildPopRetryTopicV1("", g))
	if len(t) < n {
		return ""
	}
	return t[n:]
}

// ParseNormalTopicV2 understands only V2 names: it returns the part after
// the first '+', or t unchanged when t is not a V2 retry topic.
func ParseNormalTopicV2(t string) string {
	if !IsPopRetryTopicV2(t) {
		return t
	}
	return t[strings.IndexByte(t, '+')+1:]
}

// ParseRetryTopic splits a POP retry topic into its group and normal topic
// and reports which version it is. Unlike ParseNormalTopic it validates:
// V1 names are ambiguous when the group contains '_', so the group must be
// given to decode them reliably; here V1 splits at the first '_'.
func ParseRetryTopic(t string) (group, topic string, v RetryType, err error) {
	if !IsRetryTopic(t) {
		return "", "", NormalTopic, fmt.Errorf("model: %q is not a retry topic: want %s<group>+<topic> or %s<group>_<topic>", t, RetryGroupTopicPrefix, RetryGroupTopicPrefix)
	}
	rest := t[len(RetryGroupTopicPrefix):]
	if i := strings.IndexByte(rest, '+'); i > 0 && i < len(rest)-1 {
		return rest[:i], rest[i+1:], RetryTopicV2Type, nil
	}
	if i := strings.IndexByte(rest, '_'); i > 0 && i < len(rest)-1 {
		return rest[:i], rest[i+1:], RetryTopicV1Type, nil
	}
	return "", "", NormalTopic, fmt.Errorf("model: retry topic %q has no group/topic separator: want %s<group>+<topic> or %s<group>_<topic>", t, RetryGroupTopicPrefix, RetryGroupTopicPrefix)
}

// RealTopic maps a receipt handle's retry flag back to the topic the message
// really lives in (ExtraInfoUtil.getRealTopic): the normal topic for
// NormalTopic, the V1 or V2 retry topic otherwise.
func RealTopic(topic, group string, flag RetryType) string {
	switch flag {
	case RetryTopicV1Type:
		return BuildPopRetryTopicV1(topic, group)
	case RetryTopicV2Type:
		return BuildPopRetryTopicV2(topic, group)
	}
	return topic
}

// RetryFlagOf is the retry flag a receipt handle carries for a message read
// from topic t: 2 for a V2 retry topic, 1 for any other %RETRY% topic, else 0.
func RetryFlagOf(t string) RetryType {
	switch {
	case IsPopRetryTopicV2(t):
		return RetryTopicV2Type
	case IsRetryTopic(t):
		return RetryTopicV1Type
	}
	return NormalTopic
}

// ValidateName checks a topic or group name against RocketMQ's rules: 1 to
// 127 characters from [%|a-zA-Z0-9_-] (plus '+', which only V2 retry topics
// use). '@' is never allowed: it separates the fields of store keys.
func ValidateName(kind, name string) error {
	if name == "" {
		return fmt.Errorf("model: %s name is empty: want 1 to %d characters from [%%|a-zA-Z0-9_+-]", kind, MaxNameLength)
	}
	if len(name) > MaxNameLength {
		return fmt.Errorf("model: %s name %q is %d characters long: want at most %d", kind, name, len(name), MaxNameLength)
	}
	for i := 0; i < len(name); i++ {
		if !nameChar(name[i]) {
			return fmt.Errorf("model: %s name %q has %q at position %d: allowed characters are [%%|a-zA-Z0-9_+-]", kind, name, name[i], i)
		}
	}
	return nil
}

func nameChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return c == '%' || c == '|' || c == '_' || c == '-' || c == '+'
}
