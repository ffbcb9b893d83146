package model

import (
	"strings"
	"testing"
)

// TestMessageValidateFields: each of a message's own fields that a
// producer may not send is refused with its own text, the first in
// Validate's order when several are, a sendable topic's message passes
// exactly when FieldsValid does, and a bad topic is named before any field.
func TestMessageValidateFields(t *testing.T) {
	cases := []struct {
		m    Message
		want string // "" for a message Validate accepts
	}{
		{Message{Topic: "t", Tags: "a", BornTimestamp: 5, ReconsumeTimes: 2}, ""},
		{Message{Topic: "t", Tags: "é"}, ""},
		{Message{Topic: "t", Tags: "a|b"}, "message tag \"a|b\" contains '|'"},
		{Message{Topic: "t", BornTimestamp: -1}, "message bornTimestamp -1 is negative"},
		{Message{Topic: "t", ReconsumeTimes: -3}, "message reconsumeTimes -3 is negative"},
		{Message{Topic: "t", Tags: "|", BornTimestamp: -1, ReconsumeTimes: -1}, "contains '|'"},
		{Message{Topic: "t", BornTimestamp: -1, ReconsumeTimes: -1}, "bornTimestamp -1"},
		{Message{Topic: "bad topic", Tags: "|"}, "topic"},
		{Message{Topic: strings.Repeat("t", MaxTopicLength+1)}, "at most 127"},
	}
	for _, c := range cases {
		err := c.m.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Validate(%+v) = %v, want nil", c.m, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Validate(%+v) = %v, want an error with %q", c.m, err, c.want)
		}
		if ValidateSendTopic(c.m.Topic) == nil && c.m.FieldsValid() != (err == nil) {
			t.Errorf("FieldsValid(%+v) = %v, Validate %v", c.m, c.m.FieldsValid(), err)
		}
	}
}
