package clock

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestMillisRoundsDown(t *testing.T) {
	cases := []struct {
		t    Time
		want int64
	}{{0, 0}, {999, 0}, {1000, 1}, {1999, 1}, {-1, -1}, {-1000, -1}, {-1001, -2}}
	for _, c := range cases {
		if got := c.t.Millis(); got != c.want {
			t.Errorf("Time(%d).Millis() = %d, want %d", c.t, got, c.want)
		}
	}
	if FromMillis(1666860736757).Millis() != 1666860736757 {
		t.Fatal("FromMillis/Millis do not round-trip")
	}
}

// TestMillisIsFloorDivision checks Time.Millis and Duration.Millis
// against math/big's floor division (Div rounds towards minus infinity
// for a positive divisor) on both sides of zero, every multiple of 1000's
// neighbours, the ends of int64 and random values of every magnitude.
func TestMillisIsFloorDivision(t *testing.T) {
	vals := []int64{0, 1, -1, 999, -999, 1000, -1000, 1001, -1001, math.MaxInt64, math.MinInt64, math.MinInt64 + 1, int64(Epoch)}
	r := rand.New(rand.NewPCG(34, 1))
	for range 200000 {
		v := int64(r.Uint64() >> r.IntN(64))
		vals = append(vals, v, -v, v/1000*1000, v/1000*1000-1)
	}
	k := big.NewInt(1000)
	for _, v := range vals {
		want := new(big.Int).Div(big.NewInt(v), k).Int64()
		if got := Time(v).Millis(); got != want {
			t.Fatalf("Time(%d).Millis() = %d, want %d", v, got, want)
		}
		if got := Duration(v).Millis(); got != want {
			t.Fatalf("Duration(%d).Millis() = %d, want %d", v, got, want)
		}
	}
}

func TestDurationString(t *testing.T) {
	cases := map[Duration]string{0: "0s", Second: "1s", 1500 * Millisecond: "1.5s", 250: "0.00025s", -3 * Second: "-3s"}
	for d, want := range cases {
		if got := d.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(d), got, want)
		}
	}
	if got := Epoch.Add(2 * Second).String(); got != "T+2s" {
		t.Errorf("Time.String = %q", got)
	}
}

func TestParseDuration(t *testing.T) {
	d, err := ParseDuration("1m30s")
	if err != nil || d != 90*Second {
		t.Fatalf("ParseDuration(1m30s) = %v, %v", d, err)
	}
	for _, bad := range []string{"", "10", "1ns", "abc"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestVirtualNeverMovesBackwards(t *testing.T) {
	c := NewVirtual(Epoch)
	c.Advance(5 * Second)
	c.AdvanceTo(Epoch.Add(5 * Second)) // same instant is fine
	if c.Now() != Epoch.Add(5*Second) {
		t.Fatalf("Now = %v", c.Now())
	}
	defer func() {
		if recover() == nil {
			t.Fatal("moving backwards did not panic")
		}
	}()
	c.AdvanceTo(Epoch)
}

func TestRealIsMonotonic(t *testing.T) {
	r := NewReal()
	a := r.Now()
	b := r.Now()
	if b < a {
		t.Fatalf("real clock went backwards: %d then %d", a, b)
	}
}

func TestDurationText(t *testing.T) {
	for d, want := range map[Duration]string{
		0: "0s", 250 * Millisecond: "250ms", 90 * Second: "90s", 2 * Minute: "2m", Hour: "1h",
		1500 * Microsecond: "1500us", -5 * Second: "-5s",
	} {
		b, err := d.MarshalText()
		if err != nil || string(b) != want {
			t.Errorf("%d.MarshalText() = %q, %v; want %q", int64(d), b, err, want)
		}
		var back Duration
		if d >= 0 {
			if err := back.UnmarshalText(b); err != nil || back != d {
				t.Errorf("UnmarshalText(%q) = %d, %v; want %d", b, int64(back), err, int64(d))
			}
		}
	}
	var d Duration
	for _, bad := range []string{"-2s", "2 seconds", "1ns", ""} {
		if err := d.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("UnmarshalText(%q) accepted it", bad)
		}
	}
}
