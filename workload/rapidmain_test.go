package workload

import (
	"os"
	"testing"

	"popsim/internal/rapidfail"
)

// TestMain moves the fail file of a failing rapid run out of testdata/rapid/
// (to out/rapid/), so that only committed regressions replay there.
func TestMain(m *testing.M) { os.Exit(rapidfail.Main(m)) }
