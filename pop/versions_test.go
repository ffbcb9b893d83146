package pop_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"popsim/pop"
)

// affects is docs/rocketmq/bugs.md §1 transcribed switch by switch, apart
// from the profile table: the releases (of those with a profile) each
// defect ships in. The two must agree.
var affects = map[string][]string{
	"SameDeadlineChangeInvisible":      {"5.3.2", "5.3.3", "5.4.0", "5.5.0"},                                     // #10276: KV 5.3.2 – 5.5.0
	"CacheCleanupIgnoresReviveFailure": {"5.3.2", "5.3.3", "5.4.0", "5.5.0"},                                     // #10667: KV 5.3.2+, open
	"V1RetryNoPollWake":                {"5.1.4", "5.2.0", "5.3.0", "5.3.1", "5.3.2", "5.3.3"},                   // #9632: 5.0.0 – 5.3.3, fixed 5.4.0
	"CommitOffsetLag":                  {"5.3.2", "5.3.3", "5.4.0", "5.5.0"},                                     // #10949: KV 5.3.2+, open
	"EmptyStageCommitsNextBegin":       {"5.3.2"},                                                                // #9339: 5.3.2, fixed 5.3.3
	"RetryTopicReencoding":             {"5.3.2", "5.3.3", "5.4.0", "5.5.0"},                                     // #10945/#11195: KV 5.3.2+, open
	"ReviveReadFailureLosesRetry":      {"5.1.4", "5.2.0", "5.3.0", "5.3.1", "5.3.2", "5.3.3", "5.4.0", "5.5.0"}, // #10985: FS 5.1.0+, open
	"RePutCkLosesBrokerName":           {"5.1.4"},                                                                // #7412: ≤ 5.1.4, fixed 5.2.0
	"DelayLevelTimer":                  nil,                                                                      // #3787: before 5.0.0, no profile
	"FifoRetryLockBusy":                {"5.3.2", "5.3.3", "5.4.0"},                                              // #10827: KV FIFO 5.3.2 – 5.4.0, fix merged 2026-08, release unknown
	"SameMillisChangeInvisible":        {"5.1.4", "5.2.0", "5.3.0", "5.3.1", "5.3.2", "5.3.3", "5.4.0", "5.5.0"}, // popsim's finding, FS: the code of 5.1.4, 5.3.3 and develop, no fix
	"LockFreeTimerFirstPending":        nil,                                                                      // popsim's finding: affected releases not established, no profile
	"FifoChangeBelowCommitEmptyHandle": {"5.1.4", "5.2.0", "5.3.0", "5.3.1", "5.3.2", "5.3.3", "5.4.0", "5.5.0"}, // popsim's finding: the code of 5.1.4, 5.3.3 and develop, no fix
}

func TestReleasesMatchEachSwitchsAffectedReleases(t *testing.T) {
	bt := reflect.TypeFor[pop.Bugs]()
	if len(affects) != bt.NumField() {
		t.Fatalf("affects names %d switches, pop.Bugs has %d: a new switch needs its releases here and in the profiles", len(affects), bt.NumField())
	}
	for i := range bt.NumField() {
		name := bt.Field(i).Name
		want, ok := affects[name]
		if !ok {
			t.Fatalf("switch %s: no affected releases recorded", name)
		}
		var got []string
		for _, r := range pop.Releases() {
			if reflect.ValueOf(r.Bugs).Field(i).Bool() {
				got = append(got, r.Version)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("switch %s on in %v, want %v", name, got, want)
		}
	}
}

func TestApplyVersion(t *testing.T) {
	c := pop.DefaultConfig()
	if err := c.ApplyVersion("5.1.4"); err != nil {
		t.Fatal(err)
	}
	if c.Version != "5.1.4" || c.UseServerSideResetOffset || !c.Bugs.RePutCkLosesBrokerName || c.Bugs.CommitOffsetLag {
		t.Fatalf("5.1.4 profile: %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("5.1.4 on the checkpoint path: %v", err)
	}
	kv := pop.KVConfig()
	if err := kv.ApplyVersion("5.3.1"); err != nil {
		t.Fatal(err)
	}
	if err := kv.Validate(); err == nil || !strings.Contains(err.Error(), "version: 5.3.1 has no KV path") {
		t.Fatalf("5.3.1 on the KV path: %v, want a refusal", err)
	}
	if err := kv.ApplyVersion("5.4.0"); err != nil || kv.Validate() != nil || kv.Bugs.V1RetryNoPollWake || !kv.Bugs.CommitOffsetLag || !kv.UseServerSideResetOffset {
		t.Fatalf("5.4.0 on the KV path: %v %+v", err, kv.Bugs)
	}
	before := kv
	err := kv.ApplyVersion("5.3.9")
	if err == nil || !strings.Contains(err.Error(), "5.1.4, 5.2.0, 5.3.0, 5.3.1, 5.3.2, 5.3.3, 5.4.0, 5.5.0") || kv != before {
		t.Fatalf("unknown version: %v (config changed: %v)", err, kv != before)
	}
	kv.Version = "4.9.7"
	if err := kv.Validate(); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("Validate of an unknown version: %v", err)
	}
}

func TestVersionsAscend(t *testing.T) {
	v := pop.Versions()
	if !slices.IsSortedFunc(v, func(a, b string) int { return strings.Compare(a, b) }) || len(v) == 0 {
		t.Fatalf("versions %v are not oldest first", v)
	}
}
