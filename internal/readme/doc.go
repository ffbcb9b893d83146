// Package readme extracts the commands of a README's ```sh blocks, so that
// the commands' tests can run every example as written (cmd/popsim and
// cmd/popbench TestREADME) and the README cannot drift from what the
// commands do.
//
// A command is a line of a ```sh block that starts, in its first column,
// with "go run ./cmd/<prog>". Other lines — go test, make, comments,
// indented continuation lines of a multi-host pipeline — are not commands.
// A command is split into words as a POSIX shell would for the syntax it
// may use: spaces, '…' and "…" quoting, backslash escapes, "> FILE" (its
// standard output goes to FILE) and a trailing # comment. Anything else
// (pipes, &&, ;, $, backquotes, <) is an error: a README command must be
// runnable without a shell.
//
// The trailing comment may hold markers for the test, which readers see:
//
//	[CI: ARGS]     ARGS are appended in CI only, to make the command cheaper
//	               (fewer -seeds, -set duration=…, -count/-benchtime); the
//	               flag package lets a later flag override an earlier one
//	[exit N]       the exit status the command must have (default 0)
//	[prints: TEXT] its standard output must contain TEXT
//
// Layer 6 (internal); it reads only the text it is given.
//
// # Usage
//
//	cmds, err := readme.File("../../README.md")
//	for _, c := range cmds {
//		if c.Prog == "popsim" { code := run(c.Args) ... c.Exit, c.Prints, c.Stdout }
//	}
package readme
