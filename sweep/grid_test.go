package sweep

import (
	"fmt"
	"strings"
	"testing"

	"popsim/scenarios"
)

func seedList(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}

func TestShardsPartition(t *testing.T) {
	for _, c := range []struct{ points, seeds, shards int }{{1, 1, 1}, {3, 4, 2}, {5, 7, 3}, {2, 2, 9}, {10, 20, 7}} {
		seen := map[int]int{}
		for i := range c.shards {
			for _, j := range Jobs(c.points, seedList(c.seeds), Shard{i, c.shards}) {
				if _, dup := seen[j.Index]; dup {
					t.Errorf("%+v: job %d in shards %d and %d", c, j.Index, seen[j.Index], i)
				}
				seen[j.Index] = i
				if j.Point != j.Index/c.seeds {
					t.Errorf("%+v: job %d has point %d", c, j.Index, j.Point)
				}
			}
		}
		if len(seen) != c.points*c.seeds {
			t.Errorf("%+v: shards cover %d of %d jobs", c, len(seen), c.points*c.seeds)
		}
	}
}

// The run order is fixed: points in scenarios.Grid order (first parameter
// slowest), then seeds in the order given; shard i/n takes every n-th run.
func TestJobsOrder(t *testing.T) {
	seeds := []uint64{7, 3, 9}
	all := Jobs(2, seeds, Whole)
	var got []string
	for _, j := range all {
		got = append(got, fmt.Sprintf("%d:p%d/s%d", j.Index, j.Point, j.Seed))
	}
	if want := "0:p0/s7 1:p0/s3 2:p0/s9 3:p1/s7 4:p1/s3 5:p1/s9"; strings.Join(got, " ") != want {
		t.Errorf("run order %q, want %q", strings.Join(got, " "), want)
	}
	got = nil
	for _, j := range Jobs(2, seeds, Shard{1, 4}) {
		got = append(got, fmt.Sprintf("%d:p%d/s%d", j.Index, j.Point, j.Seed))
	}
	if want := "1:p0/s3 5:p1/s9"; strings.Join(got, " ") != want {
		t.Errorf("shard 1/4 %q, want %q", strings.Join(got, " "), want)
	}
	params := []scenarios.Param{{Name: "consumers", Values: []string{"1", "2"}}, {Name: "kind", Values: []string{"pull", "simple"}}}
	var pts []string
	for _, p := range scenarios.Grid(params) {
		pts = append(pts, PointLabel(p))
	}
	if want := "consumers=1 kind=pull|consumers=1 kind=simple|consumers=2 kind=pull|consumers=2 kind=simple"; strings.Join(pts, "|") != want {
		t.Errorf("grid %q, want %q", strings.Join(pts, "|"), want)
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"0/1": {0, 1}, "3/4": {3, 4}, "0/1000000": {0, 1000000}} {
		if got, err := ParseShard(in); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"4/4", "-1/4", "1/0", "x", "1", "1/2/3", "0/1000001"} {
		if _, err := ParseShard(in); err == nil || !strings.Contains(err.Error(), "want i/n") {
			t.Errorf("ParseShard(%q): %v, want an error saying what is allowed", in, err)
		}
	}
}

func TestRunFolderAndAxes(t *testing.T) {
	p := scenarios.Point{"processing": "exp(5ms)", "consumers": "8"}
	if got := RunFolder(3, p, 12); got != "p003_consumers-8_processing-exp_5ms__seed12" {
		t.Errorf("RunFolder = %q", got)
	}
	x, group := Axes([]scenarios.Param{{Name: "kind", Values: []string{"pull", "simple"}}, {Name: "invisible", Values: []string{"10s", "60s"}}})
	if x != "invisible" || group != "consumer_kind" {
		t.Errorf("Axes = %q, %q; want invisible, consumer_kind", x, group)
	}
}
