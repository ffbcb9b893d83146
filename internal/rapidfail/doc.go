// Package rapidfail keeps a failing property run from leaving its rapid
// fail file in the source tree.
//
// pgregory.net/rapid writes the fail file of a failing check to
// testdata/rapid/<Test>/<Test>-<timestamp>-<pid>.fail in the package
// directory, and every later run of that package replays every file it
// finds there: a plain `go test ./...` after one failing `make prop` then
// fails in that work tree. Fail files belong under testdata/rapid/ only when
// they are committed on purpose, as regressions with descriptive names.
//
// Main wraps a test binary's run: it notes the fail files present before
// the tests, and afterwards moves every new one out of testdata/rapid/ to
// out/rapid/<package dir>/ at the module root (or $POPSIM_RAPID_FAILDIR),
// removes the directories the failing run created, and prints the new
// path with the command that replays it. The committed regressions stay
// and keep replaying. To keep a new fail file as a regression, copy it
// back under testdata/rapid/<Test>/ with a name that says what it catches.
//
// Usage, in a package whose tests use rapid:
//
//	func TestMain(m *testing.M) { os.Exit(rapidfail.Main(m)) }
//
// Strict wraps the test for rapid.Check: rapid only logs a committed fail
// file it cannot replay (rapid.Check's data no longer decodes into a case,
// or the file cannot be read), and Strict turns that log line into a test
// failure, so a regression kept under testdata/rapid/ cannot silently stop
// testing anything:
//
//	rapid.Check(rapidfail.Strict(t), prop)
//
// It does I/O and is for tests only; it must not be imported by non-test
// code.
package rapidfail
