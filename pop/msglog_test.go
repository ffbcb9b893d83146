package pop

import (
	"testing"

	"popsim/model"
)

// TestMsgLog appends and drops across chunk boundaries against a plain
// slice: every entry keeps its message, and an append does not move a
// message in a full chunk.
func TestMsgLog(t *testing.T) {
	var l msgLog
	var want []model.MsgID
	next := model.MsgID(1)
	push := func(k int) {
		for range k {
			l.push().msg.ID = next
			want = append(want, next)
			next++
		}
	}
	drop := func(k int) {
		l.dropFront(k)
		want = want[k:]
	}
	check := func(step string) {
		t.Helper()
		if l.len() != len(want) {
			t.Fatalf("%s: len %d, want %d", step, l.len(), len(want))
		}
		for i, id := range want {
			if got := l.at(i).ID; got != id {
				t.Fatalf("%s: entry %d is message %d, want %d", step, i, got, id)
			}
		}
	}
	push(3)
	check("first chunk")
	push(logChunk * 2)
	check("three chunks")
	p := l.at(1)
	push(logChunk)
	if p != l.at(1) || p.ID != 2 {
		t.Fatal("an append moved a message of a full chunk")
	}
	check("four chunks")
	drop(2)
	check("part of a chunk")
	drop(logChunk)
	check("across a boundary")
	if len(l.chunks) != 3 {
		t.Fatalf("%d chunks held after the first was dropped, want 3", len(l.chunks))
	}
	drop(l.len())
	check("all")
	push(logChunk + 1)
	check("after emptying")
	drop(5)
	push(1)
	check("mixed")
}
