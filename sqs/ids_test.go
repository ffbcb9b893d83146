package sqs

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidIDMatchesTheDocumentedPattern: validID accepts exactly what the
// documented pattern for MessageGroupId, MessageDeduplicationId and
// ReceiveRequestAttemptId does (1 to 128 alphanumeric and punctuation
// characters), for every single byte, every rune class edge and lengths.
func TestValidIDMatchesTheDocumentedPattern(t *testing.T) {
	re := regexp.MustCompile("^[0-9A-Za-z!\"#$%&'()*+,./:;<=>?@\\[\\\\\\]^_`{|}~-]{1,128}$")
	cases := []string{"", "a", strings.Repeat("x", 128), strings.Repeat("x", 129), "a b", "é", "a\x7f", "tab\t", "c1-7", "~!{}|"}
	for b := 0; b < 256; b++ {
		cases = append(cases, string([]byte{byte(b)}), "ok"+string([]byte{byte(b)}))
	}
	for _, s := range cases {
		if got, want := validID(s), re.MatchString(s); got != want {
			t.Errorf("validID(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
