package sqs

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"popsim/clock"
)

// This file is the hand-written datadriven machinery behind TestScripts
// (the same as pop's, which test files cannot share; in
// the style of cockroachdb/datadriven and etcd raft's interaction tests): a
// script file is a sequence of blocks
//
//	# comments explaining the block
//	command arg key=value key="quoted value"
//	----
//	expected output, one or more lines, never a blank line
//
// separated by one blank line. With -rewrite the expected outputs are
// regenerated from the engine, so behaviour changes are reviewed as diffs.

var rewriteScripts = flag.Bool("rewrite", false, "regenerate the expected output of the scripts in testdata/script")

// scriptBlock is one command and its expected output.
type scriptBlock struct {
	pre  []string // comment and blank lines before the command, verbatim
	line int      // 1-based line number of the command
	cmd  string
	want string // expected output without a trailing newline
}

// scriptFile is a parsed script: blocks plus trailing comment lines.
type scriptFile struct {
	blocks  []scriptBlock
	trailer []string
}

const scriptSep = "----"

// parseScript splits a script into blocks. A command is any line that is
// neither blank nor a comment; it must be followed by the separator. Its
// output runs to the next blank line or the end of the file.
func parseScript(text string) (*scriptFile, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var f scriptFile
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
			pre = append(pre, l)
			continue
		}
		if i+1 >= len(lines) || lines[i+1] != scriptSep {
			return nil, fmt.Errorf("line %d: command %q must be followed by a %q line", i+1, l, scriptSep)
		}
		b := scriptBlock{pre: pre, line: i + 1, cmd: l}
		pre = nil
		var out []string
		for i += 2; i < len(lines) && lines[i] != ""; i++ {
			out = append(out, lines[i])
		}
		b.want = strings.Join(out, "\n")
		f.blocks = append(f.blocks, b)
	}
	f.trailer = pre
	return &f, nil
}

// format renders the script back; parseScript(format(f)) == f.
func (f *scriptFile) format() string {
	var sb strings.Builder
	for i, b := range f.blocks {
		if i > 0 {
			sb.WriteString("\n")
		}
		for _, p := range b.pre {
			sb.WriteString(p + "\n")
		}
		sb.WriteString(b.cmd + "\n" + scriptSep + "\n")
		if b.want != "" {
			sb.WriteString(b.want + "\n")
		}
	}
	if len(f.trailer) > 0 {
		sb.WriteString("\n")
		for _, p := range f.trailer {
			sb.WriteString(p + "\n")
		}
	}
	return sb.String()
}

// scriptRunner executes one command line and returns its output. An error
// is a mistake in the script itself (unknown command or argument), not an
// engine answer; engine errors are part of the output.
type scriptRunner func(cmd string) (string, error)

// runScript executes every block of f. It returns the first mismatch (as a
// readable diff naming the file and line) unless rewrite is set, in which
// case it stores the actual outputs in f.
func runScript(path string, f *scriptFile, run scriptRunner, rewrite bool) error {
	for i := range f.blocks {
		b := &f.blocks[i]
		got, err := run(b.cmd)
		if err != nil {
			return fmt.Errorf("%s:%d: %s: %v", path, b.line, b.cmd, err)
		}
		got = strings.TrimRight(got, "\n")
		if strings.Contains(got, "\n\n") || strings.HasPrefix(got, "\n") {
			return fmt.Errorf("%s:%d: %s: output has a blank line, which the script format cannot hold:\n%s", path, b.line, b.cmd, got)
		}
		if rewrite {
			b.want = got
			continue
		}
		if got != b.want {
			return fmt.Errorf("%s:%d: %s\noutput differs (-want +got):\n%s\nIf the new output is right, regenerate with: go test ./sqs -run TestScripts -rewrite",
				path, b.line, b.cmd, lineDiff(b.want, got))
		}
	}
	return nil
}

// lineDiff renders a line diff of want and got: unchanged lines with two
// spaces, removed ones with "- ", added ones with "+ " (longest common
// subsequence; outputs are short).
func lineDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			sb.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			sb.WriteString("- " + a[i] + "\n")
			i++
		default:
			sb.WriteString("+ " + b[j] + "\n")
			j++
		}
	}
	return sb.String()
}

// runScriptFile parses, runs and (with -rewrite) rewrites one script file.
func runScriptFile(path string, run scriptRunner, rewrite bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, err := parseScript(string(data))
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	err = runScript(path, f, run, rewrite)
	if rewrite {
		// Written even when a command failed: the outputs before it help
		// to fix the script.
		if werr := os.WriteFile(path, []byte(f.format()), 0o644); err == nil {
			err = werr
		}
	}
	return err
}

// cmdArgs is a parsed command line: the command name, positional words and
// key=value pairs. Getters record the first conversion error; done reports
// it, or any argument no getter asked for (a typo in the script).
type cmdArgs struct {
	name string
	pos  []string
	kv   map[string]string
	keys []string // in order of appearance
	used map[string]bool
	npos int // positional words consumed
	err  error
}

// parseCommand tokenises a command line. Double quotes group words with
// spaces (body="a b") and are removed; single quotes do the same and keep
// double quotes inside (RedrivePolicy='{"maxReceiveCount":3}').
func parseCommand(line string) (*cmdArgs, error) {
	toks, err := tokenize(line)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	a := &cmdArgs{name: toks[0], kv: map[string]string{}, used: map[string]bool{}}
	for _, t := range toks[1:] {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			a.pos = append(a.pos, t)
			continue
		}
		if _, dup := a.kv[k]; dup {
			return nil, fmt.Errorf("argument %s given twice", k)
		}
		a.kv[k] = v
		a.keys = append(a.keys, k)
	}
	return a, nil
}

func tokenize(line string) ([]string, error) {
	var toks []string
	var cur strings.Builder
	var inQuote byte
	inTok := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case (c == '"' || c == '\'') && (inQuote == 0 || inQuote == c):
			if inQuote == 0 {
				inQuote = c
			} else {
				inQuote = 0
			}
			inTok = true
		case (c == ' ' || c == '\t') && inQuote == 0:
			if inTok {
				toks = append(toks, cur.String())
				cur.Reset()
				inTok = false
			}
		default:
			cur.WriteByte(c)
			inTok = true
		}
	}
	if inQuote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", line)
	}
	if inTok {
		toks = append(toks, cur.String())
	}
	return toks, nil
}

func (a *cmdArgs) fail(format string, args ...any) {
	if a.err == nil {
		a.err = fmt.Errorf(format, args...)
	}
}

// arg returns the i-th positional word, recording an error when absent.
func (a *cmdArgs) arg(i int, what string) string {
	if i >= len(a.pos) {
		a.fail("missing argument %d (%s)", i+1, what)
		return ""
	}
	a.npos = max(a.npos, i+1)
	return a.pos[i]
}

// rest returns the positional words from i on.
func (a *cmdArgs) rest(i int) []string {
	a.npos = len(a.pos)
	if i >= len(a.pos) {
		return nil
	}
	return a.pos[i:]
}

func (a *cmdArgs) has(k string) bool { _, ok := a.kv[k]; return ok }

func (a *cmdArgs) str(k, def string) string {
	v, ok := a.kv[k]
	if !ok {
		return def
	}
	a.used[k] = true
	return v
}

func (a *cmdArgs) int(k string, def int64) int64 {
	v, ok := a.kv[k]
	if !ok {
		return def
	}
	a.used[k] = true
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		a.fail("%s=%q: want an integer", k, v)
	}
	return n
}

func (a *cmdArgs) bool(k string, def bool) bool {
	v, ok := a.kv[k]
	if !ok {
		return def
	}
	a.used[k] = true
	b, err := strconv.ParseBool(v)
	if err != nil {
		a.fail("%s=%q: want true or false", k, v)
	}
	return b
}

// instant parses "+<duration>", an instant relative to clock.Epoch.
func (a *cmdArgs) instant(k string, def clock.Time) clock.Time {
	v, ok := a.kv[k]
	if !ok {
		return def
	}
	a.used[k] = true
	rel, ok := strings.CutPrefix(v, "+")
	d, err := clock.ParseDuration(rel)
	if !ok || err != nil {
		a.fail("%s=%q: want +<duration> from clock.Epoch, e.g. +61s", k, v)
	}
	return clock.Epoch.Add(d)
}

// done reports a conversion error or an argument nobody asked for.
func (a *cmdArgs) done() error {
	if a.err != nil {
		return a.err
	}
	for _, k := range a.keys {
		if !a.used[k] {
			return fmt.Errorf("unknown argument %s=", k)
		}
	}
	if a.npos < len(a.pos) {
		return fmt.Errorf("unexpected argument %q", a.pos[a.npos])
	}
	return nil
}
