package workload

import (
	"math"
	"slices"
	"testing"

	"popsim/model"
)

func TestPropertiesPick(t *testing.T) {
	p, err := ParseProperties("properties(3:set(region=eu,price=12), set(region=us), 1:set())")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.String(); got != "properties(3:set(price=12,region=eu),1:set(region=us),1:set())" {
		t.Errorf("String() = %q", got)
	}
	if q, err := ParseProperties(p.String()); err != nil || q.String() != p.String() {
		t.Errorf("the canonical form reads back as %v, %v", q, err)
	}
	const n = 200_000
	r, eu, none := newRand(8), 0, 0
	for range n {
		switch ps := p.Pick(r); {
		case len(ps) == 0:
			none++
		case slices.Equal(ps, []model.Property{{Key: "price", Value: "12"}, {Key: "region", Value: "eu"}}):
			eu++
			ps[0].Value = "changed" // a copy: the next pick is not affected
		case !slices.Equal(ps, []model.Property{{Key: "region", Value: "us"}}):
			t.Fatalf("picked %v, not one of the sets", ps)
		}
	}
	if f := float64(eu) / n; math.Abs(f-0.6) > 0.005 {
		t.Errorf("the eu set picked %.4f of the time, want 0.6", f)
	}
	if f := float64(none) / n; math.Abs(f-0.2) > 0.005 {
		t.Errorf("the empty set picked %.4f of the time, want 0.2", f)
	}
}

// The zero Properties draws nothing from the stream: a producer without
// properties keeps its draws, and so its trace.
func TestPropertiesZeroDrawsNothing(t *testing.T) {
	var zero Properties
	a, b := newRand(3), newRand(3)
	if zero.Pick(a) != nil || !zero.IsZero() || zero.String() != "properties()" {
		t.Fatal("the zero Properties picks something")
	}
	if a.Uint64() != b.Uint64() {
		t.Fatal("the zero Properties drew from the stream")
	}
	one, _ := ParseProperties("properties(set(a=1))")
	one.Pick(a)
	b.Uint64()
	if a.Uint64() != b.Uint64() {
		t.Fatal("a pick is not exactly one draw")
	}
}

func TestPropertiesErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"properties(0:set(a=1))", "workload: properties set 1 weight 0 out of range: want 1 to 1000000000"},
		{"properties(set(a=1,a=2))", `workload: properties set 1 names "a" twice: want each property once`},
		{"properties(set(TAGS=x))", "workload: properties set 1: property name TAGS is used by RocketMQ itself: want a user property"},
		{"properties(set(1a=x))", `workload: properties set 1: property name "1a" invalid: want 1 to 64 characters of a SQL92 identifier, [A-Za-z_$][A-Za-z0-9_$]*`},
		{"properties(set(a.b=x))", `workload: properties set 1: property name "a.b" invalid: want 1 to 64 characters of a SQL92 identifier, [A-Za-z_$][A-Za-z0-9_$]*`},
		{"properties(set(a=x'y))", `workload: properties set 1: property a value "x'y" invalid: want 1 to 128 characters from [A-Za-z0-9_.-]`},
		{"properties(x:set(a=1))", `workload: properties entry 1 weight "x" is not an integer`},
		{"properties(1=set(a=1))", "workload: properties entry 1 is not weight:set(...)"},
		{"properties(1:tags(a=1))", "workload: properties entry 1 is not set(name=value,...)"},
		{"properties(set(a))", "workload: properties entry 1: want set(name=value,...)"},
		{"tags(A:1)", `workload: properties kind "tags" unknown: want properties(weight:set(name=value,...),...)`},
	} {
		if _, err := ParseProperties(c.in); err == nil || err.Error() != c.want {
			t.Errorf("ParseProperties(%q): error %v, want %q", c.in, err, c.want)
		}
	}
}
