package scenarios_test

// Long-run tools, off by default (they are not for CI): `make catch`
// measures how often each upstream-bug switch is caught by its recipe, and
// `make swarm` sweeps every built-in scenario in swarm mode over many seeds.
// Both print a table and fail when a recipe catches its switch on fewer
// than half the seeds, or when a built-in fails.

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"popsim/scenarios"
	"popsim/sim"
)

// bugRecipe is a switch's documented recipe: a built-in scenario and -set
// lines, and the invariant that must catch it.
type bugRecipe struct {
	switchKey string // engine.bugs.<key>
	issue     string
	scenario  string
	sets      []string
	want      string // the invariant the README names
}

// bugRecipes are the README's table (make catch).
var bugRecipes = []bugRecipe{
	{"sameDeadlineChangeInvisible", "#10276", "default", []string{"engine.enablePopBufferMerge=false", "faults.renew.sameDeadline=5%"}, "lost"},
	{"cacheCleanupIgnoresReviveFailure", "#10667", "retry-storm", []string{"engine.enablePopBufferMerge=true",
		"consumers[0].invisibleTime=5s", "consumers[0].processing=exp(1s)", "producers[0].arrivals=poisson(40/s)", "faults.revivePutFailure=20%"}, "lost"},
	{"v1RetryNoPollWake", "#9632", "retry-storm", []string{"engine.enableRetryTopicV2=false"}, "missed-wakeup"},
	{"commitOffsetLag", "#10949", "default", nil, "commit-offset-lag"},
	{"retryTopicReencoding", "#11195", "default", nil, "presented-topic"},
}

// outcome is one run's verdict: the invariants it violated.
type outcome struct {
	seed uint64
	invs []string
	err  error
}

// runSeeds runs a scenario with overrides over seeds, GOMAXPROCS at a time.
func runSeeds(t *testing.T, name string, sets []string, seeds []uint64) []outcome {
	t.Helper()
	var ovs []scenarios.Override
	for _, s := range sets {
		o, err := scenarios.ParseOverride(s)
		if err != nil {
			t.Fatal(err)
		}
		ovs = append(ovs, o)
	}
	sc, err := scenarios.Builtin(name, ovs...)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]outcome, len(seeds))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, seed := range seeds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r, err := sim.Run(sc.Config(seed), sim.RunOptions{})
			o := outcome{seed: seed, err: err}
			if err == nil {
				for _, v := range r.Summary.Violations {
					if !slices.Contains(o.invs, v.Invariant) {
						o.invs = append(o.invs, v.Invariant)
					}
				}
				slices.Sort(o.invs)
			}
			out[i] = o
		}()
	}
	wg.Wait()
	return out
}

func envSeeds(t *testing.T, env string, def int) []uint64 {
	n := def
	if v := os.Getenv(env); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("%s=%q: want a seed count >= 1", env, v)
		}
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	return seeds
}

// TestCatchRates (make catch): each switch's recipe over POPSIM_CATCH
// seeds (1..N, e.g. 20) with the switch on: the share of seeds on which the
// README's invariant catches it, and every invariant seen.
func TestCatchRates(t *testing.T) {
	if os.Getenv("POPSIM_CATCH") == "" {
		t.Skip("make catch (POPSIM_CATCH=20)")
	}
	seeds := envSeeds(t, "POPSIM_CATCH", 20)
	var b strings.Builder
	fmt.Fprintf(&b, "\n| Switch | Recipe | Invariant | Caught | Also seen | Switch off: failing | Command |\n|---|---|---|---|---|---|---|\n")
	for _, r := range bugRecipes {
		if only := os.Getenv("POPSIM_CATCH_SWITCHES"); only != "" && !slices.Contains(strings.Split(only, ","), r.switchKey) {
			continue
		}
		sets := append([]string{"engine.bugs." + r.switchKey + "=true"}, r.sets...)
		outs := runSeeds(t, r.scenario, sets, seeds)
		// The control: the same recipe with the switch off must pass.
		offFails := 0
		for _, o := range runSeeds(t, r.scenario, r.sets, seeds) {
			if o.err != nil || len(o.invs) > 0 {
				offFails++
				t.Errorf("%s: the recipe fails with the switch off too, seed %d: %v %v", r.switchKey, o.seed, o.invs, o.err)
			}
		}
		caught, also := 0, map[string]int{}
		for _, o := range outs {
			if o.err != nil {
				t.Errorf("%s seed %d: %v", r.switchKey, o.seed, o.err)
				continue
			}
			if slices.Contains(o.invs, r.want) {
				caught++
			}
			for _, inv := range o.invs {
				if inv != r.want {
					also[inv]++
				}
			}
		}
		var cmd strings.Builder
		fmt.Fprintf(&cmd, "popsim sweep -scenario %s -seeds 1..%d", r.scenario, len(seeds))
		for _, s := range sets {
			if strings.ContainsAny(s, "()[]% ") {
				s = "'" + s + "'"
			}
			fmt.Fprintf(&cmd, " -set %s", s)
		}
		recipe := "`" + r.scenario + "`"
		for _, s := range r.sets {
			recipe += " `" + s + "`"
		}
		row := fmt.Sprintf("| %s `%s` | %s | `%s` | %d/%d | %s | %d/%d | `%s` |\n", r.issue, r.switchKey, recipe, r.want, caught, len(seeds), countList(also), offFails, len(seeds), cmd.String())
		fmt.Print(row) // as it comes; the whole table at the end
		b.WriteString(row)
		if 2*caught < len(seeds) {
			t.Errorf("%s: caught by %s on %d of %d seeds, want most", r.switchKey, r.want, caught, len(seeds))
		}
	}
	fmt.Print(b.String())
}

// TestSwarmBuiltins (make swarm): every built-in scenario in swarm mode over
// POPSIM_SWARM seeds (1..N, e.g. 150): passes, failing seeds and their
// invariants.
func TestSwarmBuiltins(t *testing.T) {
	if os.Getenv("POPSIM_SWARM") == "" {
		t.Skip("make swarm (POPSIM_SWARM=150)")
	}
	seeds := envSeeds(t, "POPSIM_SWARM", 150)
	names := scenarios.Names()
	if only := os.Getenv("POPSIM_SWARM_SCENARIOS"); only != "" {
		names = strings.Split(only, ",")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| Scenario | Seeds | Passed | Failing seeds (invariants) |\n|---|---|---|---|\n")
	for _, name := range names {
		outs := runSeeds(t, name, []string{"faults.swarm=true"}, seeds)
		passed := 0
		var fails []string
		for _, o := range outs {
			switch {
			case o.err != nil:
				fails = append(fails, fmt.Sprintf("%d (error: %v)", o.seed, o.err))
			case len(o.invs) > 0:
				fails = append(fails, fmt.Sprintf("%d (%s)", o.seed, strings.Join(o.invs, ", ")))
			default:
				passed++
			}
		}
		failing := strings.Join(fails, "; ")
		if failing == "" {
			failing = "—"
		}
		row := fmt.Sprintf("| %s | %d | %d | %s |\n", name, len(seeds), passed, failing)
		fmt.Print(row) // as it comes; the whole table at the end
		b.WriteString(row)
		if len(fails) > 0 {
			t.Errorf("%s: %d of %d seeds failed in swarm mode: %s (replay: popsim replay -scenario %s -seed N -set faults.swarm=true)",
				name, len(fails), len(seeds), strings.Join(fails, "; "), name)
		}
	}
	fmt.Print(b.String())
}

// countList is "a x3, b x1", sorted by name.
func countList(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s x%d", k, m[k]))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}
