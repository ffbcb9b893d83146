package hugeheap

import (
	"fmt"
	"strings"
)

// Env names the environment variable that turns the request off.
const Env = "POPSIM_HUGEPAGES"

// DefaultSize is how much heap address space Setup marks: more than the
// hot-topic hour's peak heap (434 MiB) at its collector setting.
const DefaultSize = 1 << 30

// hugePage is the size of an x86-64 and arm64 transparent huge page.
const hugePage = 2 << 20

// Status says what Setup found and did; String gives it in one line, for
// the stamps of benchmark results.
type Status struct {
	Mode    string // the kernel's THP mode ("always", "madvise", "never"), "" when unknown
	Advised int64  // bytes of heap address space marked for huge pages
	Note    string // why nothing was marked, when nothing was
}

func (s Status) String() string {
	switch {
	case s.Advised > 0:
		return fmt.Sprintf("thp %s, %d MiB of heap advised", s.Mode, s.Advised>>20)
	case s.Mode == "":
		return "none advised: " + s.Note
	}
	return fmt.Sprintf("thp %s, none advised: %s", s.Mode, s.Note)
}

// Setup requests huge pages for the heap unless the environment (read by
// getenv) turns the request off. memTotal is the machine's memory in bytes
// (internal/meminfo; 0 when unknown, which requests nothing), which caps
// the request. It returns an error only for a value of POPSIM_HUGEPAGES it
// does not know; a kernel that cannot give huge pages is a Status, not an
// error. Call it first thing in main.
func Setup(getenv func(string) string, memTotal uint64) (Status, error) {
	switch v := getenv(Env); v {
	case "off":
		return Status{Note: Env + "=off"}, nil
	case "", "on":
	default:
		return Status{}, fmt.Errorf("%s=%q: want on or off", Env, v)
	}
	return setup(DefaultSize, memTotal), nil
}

// parseMode returns the bracketed choice of a sysfs THP setting such as
// "always [madvise] never".
func parseMode(s string) (string, error) {
	for _, f := range strings.Fields(s) {
		if len(f) > 2 && f[0] == '[' && f[len(f)-1] == ']' {
			return f[1 : len(f)-1], nil
		}
	}
	return "", fmt.Errorf("no bracketed choice in %q", strings.TrimSpace(s))
}

// plan decides, from the kernel's settings, how many bytes to mark (a
// multiple of the huge page) or why none.
func plan(mode, overcommit string, total, want int64) (int64, string) {
	switch {
	case mode == "always":
		return 0, "the kernel gives huge pages unasked"
	case mode == "never":
		return 0, "the kernel gives none"
	case mode != "madvise":
		return 0, fmt.Sprintf("unknown mode %q", mode)
	case strings.TrimSpace(overcommit) == "2":
		return 0, "strict overcommit (vm.overcommit_memory=2)"
	case total <= 0:
		return 0, "the machine's memory is unknown"
	}
	n := min(want, total/2) &^ (hugePage - 1)
	if n < 4*hugePage {
		return 0, fmt.Sprintf("too little memory (%d MiB)", total>>20)
	}
	return n, ""
}
