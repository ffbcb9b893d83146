package sqs

import (
	"strings"
	"testing"
)

// A policy with several unsupported keys is refused naming the same one
// every time (the first in byte order), not whichever a map yields first.
func TestRedrivePolicyRefusalIsStable(t *testing.T) {
	const v = `{"zeta":1,"alpha":2,"mid":3,"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":"5"}`
	for i := 0; i < 50; i++ {
		_, err := parseRedrivePolicy(v)
		if err == nil || !strings.Contains(err.Error(), "got alpha.") {
			t.Fatalf("try %d: %v, want the refusal to name alpha", i, err)
		}
	}
}
