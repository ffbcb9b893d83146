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
	// MaxTopicLength is TopicValidator.TOPIC_MAX_LENGTH, the length of a
	// normal topic's name, and the longest topic a producer may send to
	// (SendMessageProcessor: Byte.MAX_VALUE).
	MaxTopicLength = 127
	// MaxRetryOrDLQTopicLength is RETRY_OR_DLQ_TOPIC_MAX_LENGTH: a %RETRY%
	// or %DLQ% topic may be this long (5.3.4+, apache/rocketmq#9479; the
	// store has allowed retry topics this long since 5.1 and refuses every
	// topic longer, HookUtils.MAX_TOPIC_LENGTH).
	MaxRetryOrDLQTopicLength = 255
	// MaxGroupLength is TopicValidator.GROUP_MAX_LENGTH (5.3.4+, PR #9563):
	// 7 + 120 + 1 + 127 = 255 keeps every POP retry topic storable.
	// Earlier releases allowed LegacyMaxGroupLength.
	MaxGroupLength       = 120
	LegacyMaxGroupLength = 255
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

// ValidateTopic is TopicValidator.validateTopic: 1 character or more from
// [%|a-zA-Z0-9_-], at most 127 (MaxTopicLength), or 255 for a %RETRY% or
// %DLQ% topic. '+', which TopicValidator refuses, is allowed in a %RETRY%
// name: V2 retry topics (%RETRY%group+topic) have it, and the broker
// creates them itself. '@' is never allowed: it separates the fields of
// store keys.
func ValidateTopic(name string) error {
	retryOrDLQ := IsRetryTopic(name) || IsDLQTopic(name)
	limit := MaxTopicLength
	if retryOrDLQ {
		limit = MaxRetryOrDLQTopicLength
	}
	return validateName("topic", name, limit, IsRetryTopic(name))
}

// ValidateGroup is TopicValidator.validateGroup: 1 to max characters
// (MaxGroupLength, or LegacyMaxGroupLength before 5.3.4) from
// [%|a-zA-Z0-9_-].
func ValidateGroup(name string, max int) error { return validateName("group", name, max, false) }

func validateName(kind, name string, limit int, plus bool) error {
	allowed := "[%|a-zA-Z0-9_-]"
	if plus {
		allowed = "[%|a-zA-Z0-9_+-]"
	}
	if name == "" {
		return fmt.Errorf("model: %s name is empty: want 1 to %d characters from %s", kind, limit, allowed)
	}
	if len(name) > limit {
		return fmt.Errorf("model: %s name %q is %d characters long: want at most %d", kind, clip(name), len(name), limit)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !nameChar(c) && !(plus && c == '+') {
			return fmt.Errorf("model: %s name %q has %q at position %d: allowed characters are %s", kind, clip(name), c, i, allowed)
		}
	}
	return nil
}

func nameChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return c == '%' || c == '|' || c == '_' || c == '-'
}
