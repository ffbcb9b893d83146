package sim

import (
	"slices"
	"testing"

	"popsim/model"
	"popsim/pop"
)

// TestUnshareKeepsHeldCopies: after unshare, writing a new answer into
// the slots as the broker does (appending the body and properties onto
// the slot's own storage) leaves the held copies of the earlier messages
// as they were, while an answer written without it would overwrite them
// (the reference: the same write into slots left alone).
func TestUnshareKeepsHeldCopies(t *testing.T) {
	fill := func() ([]pop.PoppedMessage, []model.Message) {
		ms := make([]pop.PoppedMessage, 3)
		var held []model.Message
		for i := range ms {
			m := &ms[i].Message
			m.Body = append(make([]byte, 0, 8), "old"...)
			m.Properties = append(make([]model.Property, 0, 2), model.Property{Key: "k", Value: "old"})
			held = append(held, *m) // deliverOwned's copy shares both
		}
		return ms, held
	}
	write := func(ms []pop.PoppedMessage) {
		for i := range ms {
			m := &ms[i].Message
			m.Body = append(m.Body[:0], "new"...)
			m.Properties = append(m.Properties[:0], model.Property{Key: "k", Value: "new"})
		}
	}
	ms, held := fill()
	unshare(ms)
	write(ms)
	for i, h := range held {
		if string(h.Body) != "old" || h.Properties[0].Value != "old" {
			t.Fatalf("held copy %d overwritten: %q %v", i, h.Body, h.Properties)
		}
		if string(ms[i].Message.Body) != "new" || !slices.Equal(ms[i].Message.Properties, []model.Property{{Key: "k", Value: "new"}}) {
			t.Fatalf("slot %d not rewritten: %q %v", i, ms[i].Message.Body, ms[i].Message.Properties)
		}
	}
	ms, held = fill()
	write(ms)
	if string(held[0].Body) != "new" {
		t.Fatal("the reference write did not reach the shared storage: the test shows nothing")
	}
}
