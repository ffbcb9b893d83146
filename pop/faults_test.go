package pop

import (
	"strings"
	"testing"
)

// FaultDraw is part of the contract (a driver and the reference compute
// it too): pin a few values so it cannot change by accident, and check it
// spreads: about ppm/10^6 of the ordinals fall below ppm.
func TestFaultDrawPinned(t *testing.T) {
	got := [...]int64{FaultDraw(7, 1), FaultDraw(7, 2), FaultDraw(7, 3)}
	if want := [...]int64{374487, 955804, 609346}; got != want {
		t.Errorf("FaultDraw(7, 1..3) = %v, want %v: the fault decisions changed", got, want)
	}
	below := 0
	for ord := uint64(1); ord <= 100_000; ord++ {
		if FaultDraw(42, ord) < 250_000 {
			below++
		}
	}
	if below < 24_000 || below > 26_000 {
		t.Errorf("%d of 100000 draws below 250000, want about 25000", below)
	}
}

func TestSetFaultsValidates(t *testing.T) {
	b, err := New(KVConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    Faults
		want string
	}{
		{Faults{WritePPM: -1}, "writePPM = -1 out of range"},
		{Faults{RetryWritePPM: 1_000_001}, "retryWritePPM = 1000001 out of range"},
		{Faults{Writes: []WriteFault{{Topic: ""}}}, "writes[0]"},
	} {
		if err := b.SetFaults(c.f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SetFaults(%+v) = %v, want an error containing %q", c.f, err, c.want)
		}
	}
	f := Faults{Seed: 1, Writes: []WriteFault{{Topic: "t", QueueID: -1, Count: 2}}}
	if err := b.SetFaults(f); err != nil {
		t.Fatal(err)
	}
	f.Writes[0].Count = 9 // the broker keeps its own copy
	if got := b.State().Faults; got.Writes[0].Count != 2 {
		t.Errorf("the broker's rule changed with the caller's slice: %+v", got)
	}
}
