package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"

	"popsim/internal/hugeheap"
	"popsim/internal/meminfo"
)

func main() {
	// As popsim: no allocation sampling for a heap profile nobody asked
	// for (soak -memprofile turns it back on), so that the simulator's
	// cases measure a run as popsim makes it.
	runtime.MemProfileRate = 0
	mem, _ := meminfo.Read() // unknown: no huge pages requested
	st, err := hugeheap.Setup(os.Getenv, mem.Total)
	if err != nil {
		fmt.Fprintf(os.Stderr, "popbench: %v\n", err)
		os.Exit(2)
	}
	hugePages = st.String()
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

// hugePages is what hugeheap.Setup did in main, for the results' stamps;
// tests call realMain without it.
var hugePages = "not requested"

const usage = `usage:
  popbench run [-count N] [-benchtime D] [-sizes 1k,100k,1M] [-run REGEXP] [-out out/bench] [-cpuprofile F] [-latency-every N]
  popbench compare [-threshold METRIC=LIMIT]... [-alpha 0.05] OLD NEW
  popbench smoke [-budgets FILE] [-sizes 1k,100k] [-sim=true]
  popbench soak [-scenario hot-topic-500x500] [-duration 1h] [-rate 10000/s] [-seed 1] [-out out/bench] [-name NAME] [-memprofile F] [-cpuprofile F] [-shards N] [-baseline F]
Run "popbench COMMAND -h" for a command's flags.
Exit status: 0 ok, 1 regression / broken budget / failed benchmark, 2 bad usage or input
(an unknown flag, metric, case or budget key, an unreadable file, an unwritable -out).
`

// realMain dispatches a subcommand and returns the exit status.
func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "popbench: no command\n"+usage)
		return 2
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "compare":
		return cmdCompare(args[1:], stdout, stderr)
	case "smoke":
		return cmdSmoke(args[1:], stdout, stderr)
	case "soak":
		return cmdSoak(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "popbench: unknown command %q: want run, compare, smoke or soak\n%s", args[0], usage)
	return 2
}

// flagExit turns a flag-parsing error into an exit status: -h is success;
// the flag package has already printed its own errors; ours are printed.
func flagExit(err error, stderr io.Writer) int {
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "popbench: %v\n", err)
	}
	return 2
}
