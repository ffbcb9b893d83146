package check

import (
	"os"
	"testing"

	"popsim/model"
)

// The lease a late answer carried is let go once the counts show that no
// answer on its way can carry it: in the first case of receives.txt, at
// the client's next answer (the other receive's lease was delivered
// meanwhile). Its message, settled long before, is then forgotten.
func TestLostLeaseIsLetGoAtTheNextAnswer(t *testing.T) {
	src, err := os.ReadFile("testdata/receives.txt")
	if err != nil {
		t.Fatal(err)
	}
	var tracked []int
	cases := 0
	_, err = runScriptWith(string(src), func(events []model.Event, _ Final) string {
		if cases++; cases > 1 {
			return ""
		}
		c := New(Options{})
		for i := range events {
			c.Observe(&events[i])
			tracked = append(tracked, c.Tracked())
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	n := len(tracked)
	if n < 2 || tracked[n-2] != 1 || tracked[n-1] != 0 {
		t.Fatalf("messages tracked before and after the last answer: %v, want 1 then 0 (message 1, whose lease the late answer carried)", tracked[max(0, n-4):])
	}
}

// The counts never let a lease go while a live request may still bring
// it, whatever order its reports come in, and let every lease go once
// nothing is out.
func TestReceivesCounts(t *testing.T) {
	var x receives
	x.sent()
	x.sent()
	x.lostAnswer(&model.Event{Reason: model.RTimeout})
	x.lostAnswer(&model.Event{Reason: model.RLate, Count: 2})
	if x.out != 1 || x.lost != 2 || x.timedOut != 0 {
		t.Fatalf("after a timeout and its late answer: %+v, want out 1, lost 2", x)
	}
	x.crashed()
	if x != (receives{ghosts: 1}) {
		t.Fatalf("after a crash: %+v, want the one request out as a ghost and nothing else", x)
	}
	x.sent()
	x.lostAnswer(&model.Event{Reason: model.RResponse, Count: 3})
	if x.out != 1 || x.lost != 0 {
		t.Fatalf("a lost response while a ghost may be out counted: %+v", x)
	}
	x.lostAnswer(&model.Event{Reason: model.RClientGone, Count: 1})
	x.lostAnswer(&model.Event{Reason: model.RResponse, Count: 3})
	if x.out != 0 || x.ghosts != 0 || x.lost != 3 {
		t.Fatalf("after the ghost's end: %+v, want out 0, lost 3", x)
	}
	x.lostAnswer(&model.Event{Reason: model.RRequest})
	x.answered()
	if x.out != 0 {
		t.Fatalf("out went below zero: %+v", x)
	}
}
