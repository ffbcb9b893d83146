// Command popsim runs popsim's deterministic POP simulations: one
// scenario and seed (run), a failing seed again with its trace (replay),
// grids of parameters over many seeds (sweep, merge), the capacity
// question answered directly (plan), and reports of earlier results. The
// work is package sweep's; this command parses flags, prints and chooses
// exit codes.
//
// With no arguments it runs the built-in default scenario and prints a
// summary. `popsim help` lists the subcommands; `popsim CMD -h` explains
// one.
//
// Exit codes: 0 every invariant held; 1 a violation (each printed with the
// command that replays it), a run that hit its event budget, a plan that
// found no value clearly meeting its target (none meets it, or the seed
// budget ran out first: undecided), or an incomplete sweep (report); 2
// bad input (flags, files, values) or an output folder that cannot be
// written or holds files popsim did not write; 130 interrupted (SIGINT or
// SIGTERM): the run stops at once, temporary files are removed and the
// output folder is left marked INCOMPLETE, or not at all.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"popsim/internal/gcfloor"
	"popsim/internal/hugeheap"
	"popsim/internal/meminfo"
	"popsim/sim"
)

// Exit codes.
const (
	exitOK          = 0
	exitViolation   = 1
	exitBadInput    = 2
	exitInterrupted = 130 // 128 + SIGINT, as shells report it
)

func main() {
	// popsim writes no heap profile, so the runtime need not sample
	// allocations for one: each sample unwinds the allocating stack
	// (about 44 k instructions, some 150 times in a sim.DefaultConfig run:
	// 0.4 % of it, callgrind).
	runtime.MemProfileRate = 0
	// Huge pages for the heap: fewer page faults and TLB misses, the
	// same results (README: huge pages).
	mem, _ := meminfo.Read() // unknown: no huge pages requested
	if _, err := hugeheap.Setup(os.Getenv, mem.Total); err != nil {
		fmt.Fprintf(os.Stderr, "popsim: %v\n", err)
		os.Exit(exitBadInput)
	}
	// The simulator's collector setting: sim.GCPercent (faster runs for
	// about twice the peak memory) above a heap floor (no collection
	// before the heap reaches 256 MiB, at most an eighth of the memory;
	// internal/gcfloor). GOGC in the environment still wins.
	gcfloor.Popsim(os.Getenv, sim.GCPercent, mem.Total)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once
		fmt.Fprintln(os.Stderr, "\npopsim: interrupted: stopping and cleaning up (interrupt again to quit at once)")
	}()
	e := &env{ctx: ctx, stdout: os.Stdout, stderr: os.Stderr, stderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd()))}
	os.Exit(e.main(os.Args[1:]))
}

// env is what a command talks to; tests substitute buffers, a context
// they cancel, and a clock.
type env struct {
	ctx              context.Context // cancelled on SIGINT/SIGTERM; nil means never
	stdout, stderr   io.Writer
	stderrIsTerminal bool             // progress bars only on a terminal
	now              func() time.Time // wall clock for progress and ETA; nil means time.Now
}

func (e *env) context() context.Context {
	if e.ctx == nil {
		return context.Background()
	}
	return e.ctx
}

func (e *env) clock() time.Time {
	if e.now == nil {
		return time.Now()
	}
	return e.now()
}

type command struct {
	name    string
	summary string
	run     func(e *env, args []string) int
}

func commands() []command {
	return []command{
		{"run", "run a scenario for one seed and write its report", (*env).cmdRun},
		{"replay", "re-run a failing seed and print each violation's message history", (*env).cmdReplay},
		{"check", "check a saved trace offline with the at-least-once checker", (*env).cmdCheck},
		{"list", "list the built-in scenarios", (*env).cmdList},
		{"show", "print a built-in scenario's file", (*env).cmdShow},
		{"sweep", "run a grid of parameters over many seeds, in parallel, optionally one shard of it", (*env).cmdSweep},
		{"merge", "combine sweep shard folders into one report", (*env).cmdMerge},
		{"plan", "find the fewest consumers (or smallest value) that meets a latency/duplicate target", (*env).cmdPlan},
		{"report", "re-render report.md and the charts of a run or sweep folder", (*env).cmdReport},
		{"serve", "serve the POP engine over RocketMQ 5's gRPC protocol, for real clients (wall clock, faults on demand)", (*env).cmdServe},
		{"version", "print the module version, commit and Go version", (*env).cmdVersion},
	}
}

func (e *env) main(args []string) int {
	if len(args) == 0 {
		return e.cmdRun(nil)
	}
	name, rest := args[0], args[1:]
	for _, c := range commands() {
		if c.name == name {
			return c.run(e, rest)
		}
	}
	switch name {
	case "help", "-h", "-help", "--help":
		e.usage(e.stdout)
		return exitOK
	}
	if strings.HasPrefix(name, "-") {
		// popsim -seed 3 ... means popsim run -seed 3 ...
		return e.cmdRun(args)
	}
	fmt.Fprintf(e.stderr, "popsim: unknown command %q\n\n", name)
	e.usage(e.stderr)
	return exitBadInput
}

func (e *env) usage(w io.Writer) {
	fmt.Fprintln(w, "usage: popsim [command] [flags]    (no command: run the default scenario)")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\n`popsim CMD -h` describes a command's flags.")
	fmt.Fprintln(w, "Exit codes: 0 all invariants held, 1 a violation (printed with its replay command), 2 bad input, 130 interrupted.")
}

// newFlags returns a FlagSet for a subcommand whose usage (synopsis first)
// is printed once: to stdout for -h, to stderr after a flag error.
func (e *env) newFlags(name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet("popsim "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: popsim %s %s\n\n%s\n\nflags:\n", name, synopsis, about)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags; ok is false when the command must stop with code.
// The flag package prints the usage itself on -h and on errors, to the
// FlagSet's output; parse lets it write into a buffer and then sends the
// text once, to stdout for -h (exit 0) or to stderr after an error.
func (e *env) parse(fs *flag.FlagSet, args []string) (code int, ok bool) {
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	err := fs.Parse(args)
	fs.SetOutput(e.stderr)
	if errors.Is(err, flag.ErrHelp) {
		e.stdout.Write(buf.Bytes())
		return exitOK, false
	}
	e.stderr.Write(buf.Bytes())
	if err != nil {
		return exitBadInput, false // the flag package has written the error and usage
	}
	return 0, true
}

// badInput prints an input error and returns exit code 2.
func (e *env) badInput(format string, a ...any) int {
	fmt.Fprintf(e.stderr, "popsim: "+format+"\n", a...)
	return exitBadInput
}

// parseNoArgs is parse for a command that takes no positional arguments:
// it also rejects any that follow the flags.
func (e *env) parseNoArgs(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if code, ok := e.parse(fs, args); !ok {
		return code, false
	}
	if fs.NArg() > 0 {
		return e.badInput("%s: unexpected argument %q (flags go before arguments; see -h)", strings.TrimPrefix(fs.Name(), "popsim "), fs.Arg(0)), false
	}
	return 0, true
}

// interrupted reports a stopped command and returns exit code 130.
func (e *env) interrupted(what string) int {
	fmt.Fprintf(e.stderr, "popsim: interrupted: %s\n", what)
	return exitInterrupted
}
