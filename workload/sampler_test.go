package workload

import (
	"testing"

	"pgregory.net/rapid"

	"popsim/clock"
	"popsim/workload/pcg"
)

// genDist draws a distribution of the kinds NewSampler writes out and of
// the kinds it leaves to the interface, over the whole range of their
// parameters (a uniform of one value, of a span that is a power of two,
// up to MaxSample).
func genDist(t *rapid.T) Dist {
	dur := func(label string, lo clock.Duration) clock.Duration {
		return clock.Duration(rapid.Int64Range(int64(lo), int64(MaxSample)).Draw(t, label))
	}
	must := func(d Dist, err error) Dist {
		if err != nil {
			t.Fatalf("building a distribution: %v", err)
		}
		return d
	}
	switch rapid.IntRange(0, 5).Draw(t, "kind") {
	case 0:
		lo := dur("min", 0)
		span := rapid.OneOf(rapid.Int64Range(0, 4096), rapid.Int64Range(0, int64(MaxSample-lo))).Draw(t, "span")
		return must(NewUniform(lo, lo+clock.Duration(min(span, int64(MaxSample-lo)))))
	case 1:
		return must(NewExponential(dur("mean", clock.Microsecond)))
	case 2:
		median := clock.Duration(rapid.Int64Range(1, int64(MaxSample)-1).Draw(t, "median"))
		return must(NewLogNormal(median, median+1+clock.Duration(rapid.Int64Range(0, int64(MaxSample-median)-1).Draw(t, "p99-median"))))
	case 3:
		return must(NewConstant(dur("d", 0)))
	case 4:
		return must(NewBoundedPareto(rapid.Float64Range(minAlpha, maxAlpha).Draw(t, "alpha"), clock.Millisecond, clock.Second))
	}
	return must(NewMixture(Part{PPM: 250_000, Dist: must(NewUniform(0, clock.Millisecond))}, Part{PPM: 750_000, Dist: must(NewExponential(clock.Second))}))
}

// TestSamplerMatchesDist checks Sampler against the Dist it samples: two
// copies of one stream, one sampled through each, give the same values
// and are left in the same state (the same draws were made).
func TestSamplerMatchesDist(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := genDist(t)
		s := NewSampler(d)
		seed := rapid.Uint64().Draw(t, "seed")
		want, got := pcg.New(seed, 7), pcg.New(seed, 7)
		for i := range rapid.IntRange(1, 50).Draw(t, "samples") {
			if w, g := d.Sample(want), s.Sample(got); w != g {
				t.Fatalf("%v, sample %d: Sampler gives %d, the Dist %d", d, i, g, w)
			}
		}
		if *want != *got {
			t.Fatalf("%v: the streams differ after sampling (a draw made or skipped)", d)
		}
	})
}

// TestSamplerKinds checks that the distributions NewSampler writes out
// are recognized, so that TestSamplerMatchesDist tests those paths, and
// that a uniform over a power of two microseconds, which the bounded draw
// masks, is left to the interface.
func TestSamplerKinds(t *testing.T) {
	for text, want := range map[string]int64{
		"const(5ms)": 0, "uniform(200us,2ms)": 1801, "uniform(1ms,1ms)": -1, "uniform(0us,1023us)": -1,
		"exp(10ms)": -1, "lognormal(median=6ms,p99=60ms)": -1,
	} {
		if got := NewSampler(mustDist(t, text)).n; got != want {
			t.Errorf("NewSampler(%s).n = %d, want %d", text, got, want)
		}
	}
}
