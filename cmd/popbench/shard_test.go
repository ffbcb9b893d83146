package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSoakShardsFlag: -shards out of range, not dividing the queue and
// consumer counts, or with no rate to split, is a usage error (exit 2)
// naming what is allowed, before anything runs.
func TestSoakShardsFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-shards", "0"}, "-shards 0: want 1..64"},
		{[]string{"-shards", "65"}, "-shards 65: want 1..64"},
		{[]string{"-shards", "-2"}, "-shards -2: want 1..64"},
		{[]string{"-shards", "3"}, "want one of 1, 2, 4, 5, 10, 20, 25, 50"},
		{[]string{"-shards", "2", "-set-nothing"}, "flag provided but not defined"},
		{[]string{"-shards", "2", "-rate", ""}, "want a -rate to split"},
		{[]string{"-shards", "2", "-rate", "lots"}, `rate "lots"`},
		{[]string{"-shards", "2", "-rate", "1/h"}, "give a count divisible by 2"},
		{[]string{"-shards", "2", "-baseline", "/nonexistent/soak.json"}, "-baseline"},
	} {
		dir := t.TempDir()
		code, stdout, stderr := runMain(append([]string{"soak", "-duration", "100ms", "-out", dir}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.msg) || stdout != "" {
			t.Errorf("soak %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, stdout, stderr, tc.msg)
		}
	}
}

// TestShardSeeds: one shard keeps the run's seed; n shards have n distinct
// seeds, each a function of the run's seed and the shard's index only.
func TestShardSeeds(t *testing.T) {
	if got := shardSeed(7, 0, 1); got != 7 {
		t.Errorf("one shard: seed %d, want the run's 7", got)
	}
	seen := map[uint64]bool{}
	for i := range maxShards {
		s := shardSeed(7, i, maxShards)
		if seen[s] || s == 7 {
			t.Fatalf("shard %d: seed %d repeats", i, s)
		}
		seen[s] = true
		if shardSeed(7, i, 2) != s || shardSeed(8, i, maxShards) == s {
			t.Errorf("shard %d: seed %d does not depend on (seed, index) alone", i, s)
		}
	}
}

// TestSoakShardedRun: a tiny sharded soak records each shard (its seed,
// its share of queues, consumers and rate) and aggregates that are the
// shards' sums; run twice, the shards' seeds and events repeat exactly.
func TestSoakShardedRun(t *testing.T) {
	a, b := shardedSoak(t), shardedSoak(t)
	if a.Shards != 4 || len(a.ShardRuns) != 4 {
		t.Fatalf("shards %d, %d runs recorded; want 4", a.Shards, len(a.ShardRuns))
	}
	var events, produced, acked int64
	minVirtual := a.ShardRuns[0].VirtualSeconds
	seeds := map[uint64]bool{}
	for i, r := range a.ShardRuns {
		if r.Index != i || r.Queues[0] != 125 || r.Consumers[0] != 125 || r.Rate != "poisson(500/s)" || r.Events == 0 || r.Produced == 0 || r.Violations != 0 {
			t.Errorf("shard %d: %+v; want 125 queues, 125 consumers, poisson(500/s), events and no violations", i, r)
		}
		if seeds[r.Seed] || r.Seed != shardSeed(1, i, 4) {
			t.Errorf("shard %d: seed %d repeats or is not shardSeed(1, %d, 4)", i, r.Seed, i)
		}
		seeds[r.Seed] = true
		events, produced, acked = events+r.Events, produced+r.Produced, acked+r.Acked
		minVirtual = min(minVirtual, r.VirtualSeconds)
		if rb := b.ShardRuns[i]; rb.Seed != r.Seed || rb.Events != r.Events || rb.Produced != r.Produced {
			t.Errorf("shard %d differs between two runs: %+v vs %+v", i, r, rb)
		}
	}
	if a.Events != events || a.Produced != produced || a.Acked != acked || a.VirtualSeconds != minVirtual {
		t.Errorf("aggregate events %d produced %d acked %d virtual %v; want the shards' sums %d %d %d and slowest %v",
			a.Events, a.Produced, a.Acked, a.VirtualSeconds, events, produced, acked, minVirtual)
	}
	if a.Acked != a.Produced || a.Violations != 0 || !strings.Contains(a.Command, "-shards 4") {
		t.Errorf("implausible record: %+v", a)
	}
}

func shardedSoak(t *testing.T) soakResult {
	t.Helper()
	dir := t.TempDir()
	code, stdout, stderr := runMain("soak", "-duration", "200ms", "-rate", "2000/s", "-shards", "4", "-out", dir, "-name", "sharded")
	if code != 0 || !strings.Contains(stdout, "4 shards") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	return readSoak(t, filepath.Join(dir, "sharded.json"))
}

// readSoak reads a soak record.
func readSoak(t *testing.T, path string) soakResult {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r soakResult
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSplitRate: a split keeps the rate exact, dividing the count where it
// divides and stretching the period where it does not.
func TestSplitRate(t *testing.T) {
	for _, tc := range []struct {
		rate string
		n    int
		want string
	}{{"10000/s", 2, "poisson(5000/s)"}, {"10000/s", 4, "poisson(2500/s)"}, {"3/s", 2, "poisson(3/2s)"}, {"10/m", 4, "poisson(10/4m)"}} {
		a, err := splitRate(tc.rate, tc.n)
		if err != nil || a.String() != tc.want {
			t.Errorf("splitRate(%q, %d) = %v, %v; want %s", tc.rate, tc.n, a, err, tc.want)
		}
	}
}
