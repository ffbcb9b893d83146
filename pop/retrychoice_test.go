package pop

import (
	"fmt"
	"strings"
	"testing"
)

// TestRetryChoiceTable pins the retry-first choice and the scan order of
// both paths, release by release, for draws the scripts cannot pick (the
// checkpoint path's randomQ comes from the seed).
func TestRetryChoiceTable(t *testing.T) {
	normal := &topic{cfg: TopicConfig{Name: "t", ReadQueueNums: 4}}
	prio := &topic{cfg: TopicConfig{Name: "p", ReadQueueNums: 4, MessageType: TopicMessageTypePriority}}
	g := DefaultGroup("g")
	half := DefaultGroup("h")
	half.PriorityFactor = 50
	cases := []struct {
		release string
		p, pp   int32
		tp      *topic
		grp     *GroupConfig
		kv      []int64 // requestCounts
		fs      []int32 // randomQs
		want    string
	}{
		// 5.4: KV n % (100/p) == 0; FS randomQ < p.
		{"", 20, 0, normal, &g, []int64{0, 1, 5, 7}, []int32{0, 19, 20, 99}, "kv 0:R0 1:N1 5:R5 7:N7 fs 0:R0 19:R19 20:N20 99:N99"},
		{"", 30, 0, normal, &g, []int64{0, 3, 4}, []int32{29, 30}, "kv 0:R0 3:R3 4:N4 fs 29:R29 30:N30"},
		{"", 0, 0, normal, &g, []int64{0}, []int32{0}, "kv 0:N0 fs 0:N0"},
		// Priority mode: rotation 0, the priority probability.
		{"", 20, 0, prio, &g, []int64{0, 5}, []int32{0, 99}, "kv 0:N0 5:N0 fs 0:N0 99:N0"},
		{"", 0, 100, prio, &g, []int64{3}, []int32{42}, "kv 3:R0 fs 42:R0"},
		// priority.factor 50: draws 50..99 are normal requests.
		{"", 20, 0, prio, &half, []int64{49, 150}, []int32{49, 50}, "kv 49:N0 150:R150 fs 49:N0 50:N50"},
		// 5.3.x: KV every 5th whatever p; FS randomQ < p; no priority mode.
		{RetryChoice531, 100, 100, prio, &g, []int64{0, 1, 5}, []int32{0, 99}, "kv 0:R0 1:N1 5:R5 fs 0:R0 99:R99"},
		// Before 5.3.1: FS randomQ % 5 == 0.
		{RetryChoice514, 20, 0, normal, &g, nil, []int32{0, 3, 25, 99}, "kv fs 0:R0 3:N3 25:R25 99:N99"},
	}
	for _, c := range cases {
		b := &Broker{cfg: DefaultConfig()}
		b.cfg.RetryChoiceRelease, b.cfg.PopFromRetryProbability, b.cfg.PopFromRetryProbabilityForPriority = c.release, c.p, c.pp
		var sb strings.Builder
		sb.WriteString("kv")
		for _, n := range c.kv {
			r, rot := b.kvRetryChoice(c.tp, c.grp, n)
			fmt.Fprintf(&sb, " %d:%s%d", n, rn(r), rot)
		}
		sb.WriteString(" fs")
		for _, q := range c.fs {
			r, rot := b.ckRetryChoice(c.tp, c.grp, q)
			fmt.Fprintf(&sb, " %d:%s%d", q, rn(r), rot)
		}
		if got := sb.String(); got != c.want {
			t.Errorf("release %q p=%d pp=%d topic %s factor %d:\n got %s\nwant %s", c.release, c.p, c.pp, c.tp.cfg.Name, c.grp.PriorityFactor, got, c.want)
		}
	}
}

func rn(retry bool) string {
	if retry {
		return "R"
	}
	return "N"
}

// TestScanQueueOrder: descending from the rotation with priorityOrderAsc,
// ascending without it and on releases before 5.4.0.
func TestScanQueueOrder(t *testing.T) {
	for _, c := range []struct {
		asc     bool
		release string
		rot     int64
		want    string
	}{
		{true, "", 0, "3 2 1 0"},
		{true, "", 1, "0 3 2 1"},
		{true, "", 6, "1 0 3 2"},
		{false, "", 0, "0 1 2 3"},
		{false, "", 6, "2 3 0 1"},
		{true, RetryChoice531, 6, "2 3 0 1"},
	} {
		b := &Broker{cfg: DefaultConfig()}
		b.cfg.PriorityOrderAsc, b.cfg.RetryChoiceRelease = c.asc, c.release
		var got []string
		for i := int32(0); i < 4; i++ {
			got = append(got, fmt.Sprint(b.scanQueue(4, c.rot, i)))
		}
		if s := strings.Join(got, " "); s != c.want {
			t.Errorf("asc=%v release %q rotation %d: got %s, want %s", c.asc, c.release, c.rot, s, c.want)
		}
	}
}
