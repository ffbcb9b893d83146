package pop

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"popsim/model"
)

// parseHandle must agree with model.ParseReceiptHandle on every input: the
// same handle, and an error exactly when the model errs, with its text.
func checkParseHandle(t *testing.T, s string) {
	t.Helper()
	want, wantErr := model.ParseReceiptHandle(s)
	var got model.ReceiptHandle
	gotErr := parseHandle(s, &got)
	if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
		t.Fatalf("parseHandle(%q) error %v, model says %v", s, gotErr, wantErr)
	}
	if wantErr == nil {
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("parseHandle(%q) differs from the model (-model +fast):\n%s", s, d)
		}
	}
}

func TestParseHandleMatchesModel(t *testing.T) {
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
		checkParseHandle(t, s)
	}
}

// TestParseHandleRandom mutates valid handles byte by byte.
func TestParseHandleRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := "0123456789 -+ab\t"
	for i := 0; i < 20000; i++ {
		h := model.ReceiptHandle{CkQueueOffset: r.Int64N(1 << 40), PopTime: r.Int64N(1 << 42), InvisibleTime: r.Int64N(1 << 20),
			ReviveQueueID: int32(r.IntN(1000)), RetryFlag: model.RetryType(r.IntN(3)), BrokerName: "broker-a",
			QueueID: int32(r.IntN(64)), QueueOffset: r.Int64N(1 << 40), CommitLogOffset: r.Int64N(3) - 1}
		b := []byte(h.String())
		for k := r.IntN(3); k > 0; k-- {
			b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
		}
		checkParseHandle(t, string(b))
		checkParseHandle(t, strings.TrimSpace(string(b)))
	}
}

func FuzzParseHandle(f *testing.F) {
	f.Add("0 1704067200000 60000 0 0 broker-a 3 17")
	f.Add("0 1704067200000 60000 0 1 broker-a 3 17 42")
	f.Fuzz(func(t *testing.T, s string) { checkParseHandle(t, s) })
}

func TestParseHandleDoesNotAllocate(t *testing.T) {
	s := "0 1704067200000 60000 0 0 broker-a 3 17"
	var h model.ReceiptHandle
	if n := testing.AllocsPerRun(100, func() { _ = parseHandle(s, &h) }); n != 0 {
		t.Fatalf("parseHandle allocates %v times per call, want 0", n)
	}
}
