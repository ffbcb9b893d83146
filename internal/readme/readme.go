package readme

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Command is one command line of a README.
type Command struct {
	Line   int      // 1-based line number in the file
	Text   string   // the line as written
	Prog   string   // the program, e.g. "popsim" for go run ./cmd/popsim
	Args   []string // the arguments after the program, then the CI marker's
	CI     []string // the arguments the [CI: ...] marker appended
	Stdout string   // the file named by "> FILE", "" when none
	Exit   int      // the exit status it must have ([exit N]; default 0)
	Prints []string // texts its standard output must contain ([prints: TEXT])
}

const prefix = "go run ./cmd/"

// File reads a README and returns its commands in order.
func File(path string) ([]Command, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cmds, err := Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	return cmds, nil
}

// Parse returns the commands of a README's ```sh blocks in order. Errors
// start with the line number.
func Parse(text string) ([]Command, error) {
	var out []Command
	inBlock, inSh := false, false
	for i, line := range strings.Split(text, "\n") {
		if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "```") {
			if inBlock {
				inBlock, inSh = false, false
			} else {
				inBlock, inSh = true, trimmed == "```sh"
			}
			continue
		}
		if !inSh || !strings.HasPrefix(line, prefix) {
			continue
		}
		c, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("%d: %s: %v", i+1, line, err)
		}
		c.Line = i + 1
		out = append(out, c)
	}
	return out, nil
}

// parseLine splits one command line.
func parseLine(line string) (Command, error) {
	c := Command{Text: line}
	words, comment, err := split(line)
	if err != nil {
		return c, err
	}
	if len(words) < 3 || words[0] != "go" || words[1] != "run" {
		return c, fmt.Errorf("want go run ./cmd/<program> ...")
	}
	prog, ok := strings.CutPrefix(words[2], "./cmd/")
	if !ok || prog == "" || strings.Contains(prog, "/") {
		return c, fmt.Errorf("want go run ./cmd/<program> ...")
	}
	c.Prog = prog
	for i := 3; i < len(words); i++ {
		if words[i] != ">" {
			c.Args = append(c.Args, words[i])
			continue
		}
		if i+1 >= len(words) || c.Stdout != "" {
			return c, fmt.Errorf("'>' wants one file name")
		}
		c.Stdout = words[i+1]
		i++
	}
	if err := c.markers(comment); err != nil {
		return c, err
	}
	c.Args = append(c.Args, c.CI...)
	return c, nil
}

// markers reads [CI: ...], [exit N] and [prints: ...] from a comment.
func (c *Command) markers(comment string) error {
	for {
		i := strings.Index(comment, "[")
		if i < 0 {
			return nil
		}
		j := closing(comment, i)
		if j < 0 {
			return fmt.Errorf("unbalanced [ in the comment")
		}
		body := comment[i+1 : j]
		comment = comment[j+1:]
		switch {
		case strings.HasPrefix(body, "CI:"):
			words, rest, err := split(strings.TrimPrefix(body, "CI:"))
			if err != nil || rest != "" || strings.Contains(body, ">") {
				return fmt.Errorf("[CI: ...] wants plain arguments: %q", body)
			}
			c.CI = append(c.CI, words...)
		case strings.HasPrefix(body, "exit "):
			n, err := strconv.Atoi(strings.TrimPrefix(body, "exit "))
			if err != nil || n < 0 || n > 255 {
				return fmt.Errorf("[%s]: want [exit N] with 0 <= N <= 255", body)
			}
			c.Exit = n
		case strings.HasPrefix(body, "prints: "):
			c.Prints = append(c.Prints, strings.TrimPrefix(body, "prints: "))
		}
	}
}

// closing returns the index of the ] closing the [ at s[i], or -1.
func closing(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '[':
			depth++
		case ']':
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// split splits a line into shell words and its trailing comment. ">" is a
// word of its own.
func split(line string) (words []string, comment string, err error) {
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == ' ' || ch == '\t':
			flush()
		case ch == '#' && !inWord:
			return words, strings.TrimSpace(line[i+1:]), nil
		case ch == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, "", fmt.Errorf("unterminated '")
			}
			cur.WriteString(line[i+1 : i+1+j])
			inWord, i = true, i+1+j
		case ch == '"':
			j := strings.IndexByte(line[i+1:], '"')
			if j < 0 {
				return nil, "", fmt.Errorf("unterminated \"")
			}
			q := line[i+1 : i+1+j]
			if strings.ContainsAny(q, "$`\\") {
				return nil, "", fmt.Errorf("\"...\" with $, ` or \\: use '...'")
			}
			cur.WriteString(q)
			inWord, i = true, i+1+j
		case ch == '\\':
			if i+1 >= len(line) {
				return nil, "", fmt.Errorf("a line continued with \\ is not one command")
			}
			cur.WriteByte(line[i+1])
			inWord, i = true, i+1
		case ch == '>':
			flush()
			words = append(words, ">")
		case strings.IndexByte("|&;<$`(){}", ch) >= 0:
			// [ ] * ? are literal when, as here, no file matches them.
			return nil, "", fmt.Errorf("shell syntax %q outside quotes: a README command must mean the same without a shell (quoting and > FILE only)", string(ch))
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	return words, "", nil
}
