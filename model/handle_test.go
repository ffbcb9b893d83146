package model

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ParseReceiptHandleInto must agree with the careful parser on every
// input: the same handle, and an error exactly when it errs, with its text.
func checkParseInto(t *testing.T, s string) {
	t.Helper()
	want, wantErr := parseHandleCareful(s)
	var got ReceiptHandle
	gotErr := ParseReceiptHandleInto(s, &got)
	if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
		t.Fatalf("ParseReceiptHandleInto(%q) error %v, careful parser says %v", s, gotErr, wantErr)
	}
	if wantErr == nil {
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("ParseReceiptHandleInto(%q) differs from the careful parser (-careful +fast):\n%s", s, d)
		}
	}
}

func TestParseIntoMatchesCareful(t *testing.T) {
	for _, s := range []string{
		"0 1704067200000 60000 0 0 broker-a 3 17",
		"0 1704067200000 60000 0 0 broker-a 3 17 -1",
		"0 1704067200000 60000 0 0 broker-a 3 17 123456789",
		"5 1 2 2147483647 2 b 2147483647 999999999999999999",
		"5 1 2 2147483648 2 b 0 1", "5 1 2 3 3 b 0 1", "5 1 2 3 1 b 2147483648 1",
		"007 1 2 3 1 b 0 1", "+7 1 2 3 1 b 0 1", "-7 1 2 3 1 b 0 1", "1 -1 2 3 1 b 0 1",
		"1 1 2 3 1 b 0 1 2 3", "1 1 2 3 1 b 0 1 ", " 1 1 2 3 1 b 0 1", "1  1 2 3 1 b 0 1",
		"1 1 2 3 1  0 1", "1 1 2 3 1 b 0", "", " ", "1 2 3 4 5 6 7 8", "x 1 2 3 1 b 0 1",
		"1234567890123456789 1 2 3 1 b 0 1", "9223372036854775807 1 2 3 1 b 0 1",
		"1 1 2 3 1 b\tc 0 1", "1 1 2 3 1 b 0 1\n", "1 1 2 999 1 b 0 1",
	} {
		checkParseInto(t, s)
	}
}

// TestParseIntoRandom mutates valid handles byte by byte.
func TestParseIntoRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := "0123456789 -+ab\t"
	for i := 0; i < 20000; i++ {
		h := ReceiptHandle{CkQueueOffset: r.Int64N(1 << 40), PopTime: r.Int64N(1 << 42), InvisibleTime: r.Int64N(1 << 20),
			ReviveQueueID: int32(r.IntN(1000)), RetryFlag: RetryType(r.IntN(3)), BrokerName: "broker-a",
			QueueID: int32(r.IntN(64)), QueueOffset: r.Int64N(1 << 40), CommitLogOffset: r.Int64N(3) - 1}
		b := []byte(h.String())
		for k := r.IntN(3); k > 0; k-- {
			b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
		}
		checkParseInto(t, string(b))
		checkParseInto(t, strings.TrimSpace(string(b)))
	}
}

func FuzzParseReceiptHandleInto(f *testing.F) {
	f.Add("0 1704067200000 60000 0 0 broker-a 3 17")
	f.Add("0 1704067200000 60000 0 1 broker-a 3 17 42")
	f.Fuzz(func(t *testing.T, s string) { checkParseInto(t, s) })
}

func TestParseIntoDoesNotAllocate(t *testing.T) {
	s := "0 1704067200000 60000 0 0 broker-a 3 17"
	var h ReceiptHandle
	if n := testing.AllocsPerRun(100, func() { _ = ParseReceiptHandleInto(s, &h) }); n != 0 {
		t.Fatalf("ParseReceiptHandleInto allocates %v times per call, want 0", n)
	}
}
