package hugeheap

import (
	"strings"
	"testing"
)

func TestParseMode(t *testing.T) {
	for in, want := range map[string]string{
		"always [madvise] never\n": "madvise",
		"[always] madvise never":   "always",
		"always madvise [never]":   "never",
	} {
		if got, err := parseMode(in); err != nil || got != want {
			t.Errorf("parseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "always madvise never", "[] x"} {
		if got, err := parseMode(in); err == nil {
			t.Errorf("parseMode(%q) = %q, want an error", in, got)
		}
	}
}

func TestPlan(t *testing.T) {
	const gib = 1 << 30
	cases := []struct {
		mode, over  string
		total, want int64
		n           int64
		why         string
	}{
		{"madvise", "0\n", 8 * gib, gib, gib, ""},
		{"madvise", "", 8 * gib, gib, gib, ""},
		{"madvise", "1", gib, gib, gib / 2, ""},
		{"madvise", "0", gib + 3<<20, gib, gib / 2, ""},
		{"madvise", "2\n", 8 * gib, gib, 0, "strict overcommit"},
		{"madvise", "0", 12 << 20, gib, 0, "too little memory"},
		{"madvise", "0", 0, gib, 0, "memory is unknown"},
		{"always", "0", 8 * gib, gib, 0, "unasked"},
		{"never", "0", 8 * gib, gib, 0, "gives none"},
		{"defer", "0", 8 * gib, gib, 0, `unknown mode "defer"`},
	}
	for _, c := range cases {
		n, why := plan(c.mode, c.over, c.total, c.want)
		if n != c.n || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
			t.Errorf("plan(%q, %q, %d, %d) = %d, %q; want %d, %q", c.mode, c.over, c.total, c.want, n, why, c.n, c.why)
		}
		if n%hugePage != 0 {
			t.Errorf("plan(%q, %q, %d, %d) = %d: not a multiple of 2 MiB", c.mode, c.over, c.total, c.want, n)
		}
	}
}

func TestSetupEnvironment(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k != Env {
				t.Fatalf("Setup read %s, want only %s", k, Env)
			}
			return v
		}
	}
	st, err := Setup(env("off"), 8<<30)
	if err != nil || st.Advised != 0 || st.String() != "none advised: POPSIM_HUGEPAGES=off" {
		t.Errorf("Setup(off) = %v, %v", st, err)
	}
	for _, bad := range []string{"yes", "OFF", "1"} {
		if _, err := Setup(env(bad), 8<<30); err == nil || !strings.Contains(err.Error(), "want on or off") {
			t.Errorf("Setup(%q): error %v, want one naming on and off", bad, err)
		}
	}
}

func TestStatusString(t *testing.T) {
	if got, want := (Status{Mode: "madvise", Advised: 1 << 30}).String(), "thp madvise, 1024 MiB of heap advised"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := (Status{Mode: "never", Note: "the kernel gives none"}).String(), "thp never, none advised: the kernel gives none"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
