package readme

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	text := "intro\n" +
		"```sh\n" +
		"go run ./cmd/popsim                       # the default\n" +
		"go test ./...\n" +
		"go run ./cmd/popsim show crash-storm > my.yaml   # save it\n" +
		"go run ./cmd/popsim run -set 'producers[0].arrivals=poisson(5000/s)' -set consumers[0].count=32 -x \"a b\"   # [CI: -set duration=5s -set 'x=(1)'] [exit 1] [prints: answer: x=[1]]\n" +
		"  go run ./cmd/popsim indented continuation\n" +
		"# go run ./cmd/popsim in a comment\n" +
		"```\n" +
		"```yaml\n" +
		"go run ./cmd/popsim not a sh block\n" +
		"```\n" +
		"go run ./cmd/popsim not in a block\n" +
		"```sh\n" +
		"go run ./cmd/popbench compare a.txt b.txt\n" +
		"```\n"
	cmds, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{
		{Line: 3, Prog: "popsim"},
		{Line: 5, Prog: "popsim", Args: []string{"show", "crash-storm"}, Stdout: "my.yaml"},
		{Line: 6, Prog: "popsim", Args: []string{"run", "-set", "producers[0].arrivals=poisson(5000/s)", "-set", "consumers[0].count=32", "-x", "a b", "-set", "duration=5s", "-set", "x=(1)"},
			CI: []string{"-set", "duration=5s", "-set", "x=(1)"}, Exit: 1, Prints: []string{"answer: x=[1]"}},
		{Line: 15, Prog: "popbench", Args: []string{"compare", "a.txt", "b.txt"}},
	}
	if len(cmds) != len(want) {
		t.Fatalf("%d commands, want %d: %+v", len(cmds), len(want), cmds)
	}
	for i := range want {
		cmds[i].Text = ""
		if !reflect.DeepEqual(cmds[i], want[i]) {
			t.Errorf("command %d:\n got %+v\nwant %+v", i, cmds[i], want[i])
		}
	}
}

func TestParseRefusesShellSyntax(t *testing.T) {
	for line, msg := range map[string]string{
		"go run ./cmd/popsim list | head":             `shell syntax "|"`,
		"go run ./cmd/popsim list && echo":            `shell syntax "&"`,
		"go run ./cmd/popsim run -out $HOME/x":        `shell syntax "$"`,
		"go run ./cmd/popsim run -set a=poisson(1/s)": `shell syntax "("`,
		"go run ./cmd/popsim merge out/s{0..7}":       `shell syntax "{"`,
		"go run ./cmd/popsim run -set 'a=1":           "unterminated '",
		"go run ./cmd/popsim run \\":                  "continued",
		"go run ./cmd/popsim list > a > b":            "'>' wants one file name",
		"go run ./cmd/popsim list   # [exit x]":       "want [exit N]",
		"go run ./cmd/popsim list   # [CI: -seeds 1":  "unbalanced",
		"go run ./cmd/ list":                          "want go run ./cmd/<program>",
	} {
		_, err := Parse("```sh\n" + line + "\n```\n")
		if err == nil || !strings.Contains(err.Error(), msg) || !strings.HasPrefix(err.Error(), "2: ") {
			t.Errorf("%s: %v, want an error at line 2 with %q", line, err, msg)
		}
	}
}
