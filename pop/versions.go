package pop

import (
	"fmt"
	"strings"
)

// Release is what popsim knows of one RocketMQ release
// (docs/rocketmq/bugs.md §9): the defects of Bugs it ships and the
// defaults it differs from popsim's in. A profile sets exactly these; the
// release's other differences (the table in bugs.md §9.2) are behaviour
// the engine does not switch per release, listed in Release.NotModelled.
type Release struct {
	Version string
	// KV: the release has the KV path (popConsumerKVService*, RIP-73,
	// 5.3.2). A profile without it refuses popConsumerKVServiceEnable.
	KV bool
	// Bugs are the switches the release ships (each defect present).
	Bugs Bugs
	// UseServerSideResetOffset is the release's default (false before
	// 5.2.0).
	UseServerSideResetOffset bool
	// RetryChoiceRelease is the release's retry-versus-normal choice and
	// scan (Config.RetryChoiceRelease): RetryChoice514 before 5.3.1
	// (popFromRetryProbability came with apache/rocketmq#8657),
	// RetryChoice531 to 5.3.x, "" from 5.4.0 (priority messages, RIP-80).
	RetryChoiceRelease string
	// NotModelled lists what else differs in the release and is not part
	// of its profile, in a few words each.
	NotModelled []string
}

// releases is the profile table, oldest first. Sources: docs/rocketmq/
// bugs.md §1 (each switch's affected releases) and §9 (defaults and
// behaviour by release). 5.3.4 is left out: whether it still has #9632
// (V1RetryNoPollWake) is not established.
var releases = []Release{
	{Version: "5.1.4", UseServerSideResetOffset: false, RetryChoiceRelease: RetryChoice514,
		Bugs:        Bugs{SameMillisChangeInvisible: true, FifoChangeBelowCommitEmptyHandle: true, V1RetryNoPollWake: true, RePutCkLosesBrokerName: true, ReviveReadFailureLosesRetry: true},
		NotModelled: []string{"no forced notify (popLongPollingForceNotifyInterval)", "SYSTEM_ERROR where later releases answer specific codes", "group names up to 255 characters"}},
	{Version: "5.2.0", UseServerSideResetOffset: true, RetryChoiceRelease: RetryChoice514,
		Bugs:        Bugs{SameMillisChangeInvisible: true, FifoChangeBelowCommitEmptyHandle: true, V1RetryNoPollWake: true, ReviveReadFailureLosesRetry: true},
		NotModelled: []string{"no forced notify", "SYSTEM_ERROR codes", "the in-flight stop leaks the queue lock (#8601, FIFO)", "group names up to 255 characters"}},
	{Version: "5.3.0", UseServerSideResetOffset: true, RetryChoiceRelease: RetryChoice514,
		Bugs:        Bugs{SameMillisChangeInvisible: true, FifoChangeBelowCommitEmptyHandle: true, V1RetryNoPollWake: true, ReviveReadFailureLosesRetry: true},
		NotModelled: []string{"no forced notify", "SYSTEM_ERROR codes", "the in-flight stop leaks the queue lock (#8601, FIFO)", "group names up to 255 characters"}},
	{Version: "5.3.1", UseServerSideResetOffset: true, RetryChoiceRelease: RetryChoice531,
		Bugs:        Bugs{SameMillisChangeInvisible: true, FifoChangeBelowCommitEmptyHandle: true, V1RetryNoPollWake: true, ReviveReadFailureLosesRetry: true},
		NotModelled: []string{"no forced notify", "SYSTEM_ERROR codes", "group names up to 255 characters"}},
	{Version: "5.3.2", KV: true, UseServerSideResetOffset: true, RetryChoiceRelease: RetryChoice531,
		Bugs: Bugs{SameMillisChangeInvisible: true, FifoChangeBelowCommitEmptyHandle: true, V1RetryNoPollWake: true, ReviveReadFailureLosesRetry: true, SameDeadlineChangeInvisible: true,
			CacheCleanupIgnoresReviveFailure: true, CommitOffsetLag: true, EmptyStageCommitsNextBegin: true, RetryTopicReencoding: true,
			FifoRetryLockBusy: true},
		NotModelled: []string{"KV ignores the request's init mode (#9246)", "an admin reset writes the KV pull offset wrongly (#9369)", "the cache may commit before its records are written (#9626)", "group names up to 255 characters"}},
	{Version: "5.3.3", KV: true, UseServerSideResetOffset: true, RetryChoiceRelease: RetryChoice531,
		Bugs: Bugs{SameMillisChangeInvisible: true, FifoChangeBelowCommitEmptyHandle: true, V1RetryNoPollWake: true, ReviveReadFailureLosesRetry: true, SameDeadlineChangeInvisible: true,
			CacheCleanupIgnoresReviveFailure: true, CommitOffsetLag: true, RetryTopicReencoding: true,
			FifoRetryLockBusy: true},
		NotModelled: []string{"the cache may commit before its records are written (#9626)", "group names up to 255 characters"}},
	{Version: "5.4.0", KV: true, UseServerSideResetOffset: true,
		Bugs: Bugs{SameMillisChangeInvisible: true, FifoChangeBelowCommitEmptyHandle: true, ReviveReadFailureLosesRetry: true, SameDeadlineChangeInvisible: true,
			CacheCleanupIgnoresReviveFailure: true, CommitOffsetLag: true, RetryTopicReencoding: true,
			FifoRetryLockBusy: true},
		NotModelled: []string{"cache cleanup can restore an acked record (#10736)", "one failing revive aborts the KV revive batch (#10658)"}},
	{Version: "5.5.0", KV: true, UseServerSideResetOffset: true,
		Bugs: Bugs{SameMillisChangeInvisible: true, FifoChangeBelowCommitEmptyHandle: true, ReviveReadFailureLosesRetry: true, SameDeadlineChangeInvisible: true,
			CacheCleanupIgnoresReviveFailure: true, CommitOffsetLag: true, RetryTopicReencoding: true},
		NotModelled: []string{"as 5.4.0", "changeInvisibleTime's suspend flag (#10051)", "whether it ships the #10827 fix (FifoRetryLockBusy) is not established: off"}},
}

// Releases returns the release profiles, oldest first (a copy).
func Releases() []Release {
	out := make([]Release, len(releases))
	copy(out, releases)
	return out
}

// Versions lists the versions Releases knows, oldest first.
func Versions() []string {
	out := make([]string, len(releases))
	for i, r := range releases {
		out[i] = r.Version
	}
	return out
}

// LookupRelease returns the profile of version, or an error naming the
// known versions.
func LookupRelease(version string) (Release, error) {
	for _, r := range releases {
		if r.Version == version {
			return r, nil
		}
	}
	return Release{}, fmt.Errorf("pop: unknown RocketMQ version %q: want one of %s", version, strings.Join(Versions(), ", "))
}

// ApplyVersion sets c to release version's profile: Version, exactly the
// release's bug switches, the defaults it changed and its retry choice. Settings the
// caller makes afterwards override the profile's. An unknown version is
// an error naming the known ones, and leaves c unchanged.
func (c *Config) ApplyVersion(version string) error {
	r, err := LookupRelease(version)
	if err != nil {
		return err
	}
	c.Version, c.Bugs, c.UseServerSideResetOffset, c.RetryChoiceRelease = r.Version, r.Bugs, r.UseServerSideResetOffset, r.RetryChoiceRelease
	return nil
}

// validateVersion: a named version must be known, and a release without
// the KV path cannot serve POP on it.
func (c *Config) validateVersion() error {
	if c.Version == "" {
		return nil
	}
	r, err := LookupRelease(c.Version)
	if err != nil {
		return &ConfigError{Key: "version", Msg: fmt.Sprintf("%q unknown", c.Version), Want: "one of " + strings.Join(Versions(), ", ")}
	}
	if c.UsesKV() && !r.KV {
		return &ConfigError{Key: "version", Msg: fmt.Sprintf("%s has no KV path (popConsumerKVServiceEnable came in 5.3.2)", r.Version),
			Want: "popConsumerKVServiceEnable: false for it, or a release from 5.3.2 on"}
	}
	return nil
}
