package workload

import (
	"math"
	"testing"
)

func TestTagsPick(t *testing.T) {
	tags, err := ParseTags("tags(TagA:3,TagB:1)")
	if err != nil {
		t.Fatal(err)
	}
	const n = 400_000
	r, countA := newRand(8), 0
	for range n {
		switch tags.Pick(r) {
		case "TagA":
			countA++
		case "TagB":
		default:
			t.Fatal("picked a tag not in the list")
		}
	}
	if f := float64(countA) / n; math.Abs(f-0.75) > 0.003 {
		t.Errorf("TagA picked %.4f of the time, want 0.75", f)
	}
	if tags.String() != "tags(TagA:3,TagB:1)" {
		t.Errorf("String() = %q", tags.String())
	}
	var zero Tags
	if zero.Pick(r) != "" || zero.String() != "tags()" {
		t.Errorf("zero Tags: Pick %q, String %q", zero.Pick(r), zero.String())
	}
	// Without tags Pick draws what Int64N(1) draws: the streams stay together.
	a, b := newRand(9), newRand(9)
	for i := range 100 {
		zero.Pick(a)
		b.Int64N(1)
		if *a != *b {
			t.Fatalf("zero Tags: the stream differs from Int64N(1)'s after %d picks", i+1)
		}
	}
	if z, err := ParseTags("tags()"); err != nil || z.String() != "tags()" {
		t.Errorf(`ParseTags("tags()") = %v, %v`, z, err)
	}
}

func TestTagsErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"tags(A:0)", "workload: tag A weight 0 out of range: want 1 to 1000000000"},
		{"tags(A:1,A:2)", `workload: tag "A" listed twice: want each tag once`},
		{"tags(A||B:1)", `workload: tag name "A||B" invalid: want 1 to 128 characters from [A-Za-z0-9_.-]`},
		{"tags(A)", "workload: tags entry 1 is not Name:weight"},
		{"tags(A:x)", `workload: tag A weight "x": want an unsigned integer of at most 18 digits`},
	} {
		if _, err := ParseTags(c.in); err == nil || err.Error() != c.want {
			t.Errorf("ParseTags(%q): error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestKey(t *testing.T) {
	if Key(0) != "k-0" || Key(12345) != "k-12345" {
		t.Errorf("Key(0) = %q, Key(12345) = %q", Key(0), Key(12345))
	}
}
