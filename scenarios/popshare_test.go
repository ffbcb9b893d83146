package scenarios

import (
	"slices"
	"strings"
	"testing"

	"popsim/model"
	"popsim/sim"
)

// pop-share pins the assignment its consumers actually pop: with 8
// consumers on 8 queues, popShareQueueNum 0 and 7 (= n-1) pop every queue
// with all-queue pops, 1 pops the client's own queue and the next one,
// 6 (= n-2) its own and the next six, each with queue-specific pops. No
// crashes here, so that the assignment stays put; zero violations.
func TestPopShareBuiltin(t *testing.T) {
	span := func(k int) func(c int) []int32 {
		return func(c int) []int32 {
			var qs []int32
			for i := range k + 1 {
				qs = append(qs, int32((c+i)%8))
			}
			slices.Sort(qs)
			return qs
		}
	}
	all := func(int) []int32 { return []int32{-1} }
	for _, tc := range []struct {
		share string
		want  func(client int) []int32
	}{{"0", all}, {"1", span(1)}, {"6", span(6)}, {"7", all}} {
		t.Run("popShareQueueNum="+tc.share, func(t *testing.T) {
			s, err := Builtin("pop-share", Override{Path: "groups[0].popShareQueueNum", Value: tc.share},
				Override{Path: "duration", Value: "5s"}, Override{Path: "warmup", Value: "500ms"}, Override{Path: "faults.crash.every", Value: "0s"})
			if err != nil {
				t.Fatal(err)
			}
			res, err := sim.Run(s.Config(s.Seed), sim.RunOptions{Scenario: "pop-share", KeepEvents: true})
			if err != nil {
				t.Fatal(err)
			}
			sum := res.Summary
			for _, v := range sum.Violations {
				t.Errorf("violation %s: %s", v.Invariant, v.Detail)
			}
			if sum.Produced == 0 || sum.Acked != sum.Produced {
				t.Fatalf("produced %d, acked %d", sum.Produced, sum.Acked)
			}
			popped := make([][]int32, 8)
			for _, e := range res.Events {
				if e.Kind == model.EvReceive && !slices.Contains(popped[e.Client], e.Queue) {
					popped[e.Client] = append(popped[e.Client], e.Queue)
				}
			}
			for c, qs := range popped {
				slices.Sort(qs)
				if !slices.Equal(qs, tc.want(c)) {
					t.Errorf("client %d popped queues %v, want %v", c, qs, tc.want(c))
				}
			}
		})
	}
}

// The request mode keys and clientRebalance are checked where they are
// written.
func TestRequestModeKeys(t *testing.T) {
	data, err := BuiltinText("pop-share")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{"clientRebalance: false", "clientRebalance: maybe", `consumers[0].clientRebalance: "maybe": want true or false`},
		{"requestMode: pop", "requestMode: push", `groups[0].requestMode: "push": want pop or pull`},
		{"requestMode: pop", "requestMode: pull", `groups[0].popShareQueueNum: 1 without requestMode pop`},
		{"popShareQueueNum: 1", "popShareQueueNum: 1.5", "groups[0].popShareQueueNum"},
	} {
		text := strings.ReplaceAll(string(data), tc.from, tc.to)
		if _, err := Load("x.yaml", []byte(text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.to, err, tc.want)
		}
	}
}
