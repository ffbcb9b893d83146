package rapidfail

import (
	"fmt"
	"strings"

	"pgregory.net/rapid"
)

// Strict returns tb for rapid.Check with one difference: a committed
// fail file that rapid skips fails the test. rapid replays each file under
// testdata/rapid/<Test>/ before its random checks, but when a file no
// longer decodes into a case (a generator now draws differently, or a
// state machine's fixed bug lets the replay run past its recorded steps)
// or cannot be read, rapid only logs it and goes on: the regression the
// file was committed for then tests nothing, and nobody sees it.
func Strict(tb rapid.TB) rapid.TB { return strictTB{tb} }

type strictTB struct{ rapid.TB }

func (s strictTB) Logf(format string, args ...any) {
	s.Helper()
	msg := fmt.Sprintf(format, args...)
	s.TB.Logf("%s", msg)
	if Skipped(msg) {
		s.Errorf("%s: a committed fail file that replays nothing tests nothing; "+
			"delete it, or draw its case again (a state machine's failure is kept as a script instead)", msg)
	}
}

// Skipped reports whether rapid's log line msg says it skipped a fail
// file instead of replaying it.
func Skipped(msg string) bool {
	return strings.HasPrefix(msg, "[rapid] ignoring fail file") ||
		strings.HasPrefix(msg, "[rapid] fail file ") && strings.HasSuffix(msg, " is no longer valid")
}
