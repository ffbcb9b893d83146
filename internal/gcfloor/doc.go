// Package gcfloor runs the Go collector with a floor under its heap goal:
// no collection until the heap reaches the floor, and above it the usual
// goal of the live heap times (1 + percent/100).
//
// Why: a simulator run allocates its state in a burst and keeps most of
// it to the end (sim.DefaultConfig's checkpoint path holds every CK of its
// 60 virtual seconds), so a small process collects while its heap grows
// (at 16 and 72 MB in a popbench process making two such runs at GOGC
// 400, GODEBUG=gctrace=1), marking a live heap that is
// about to be freed whole when the run ends. Those early collections,
// their write barriers and the sweeping after them buy back no memory the
// run needed, and cost a process that makes two such runs 4.3 % of its
// instructions, all threads counted (callgrind, 3 423.7 → 3 277.8 M
// with the floor, stop 49). Raising GOGC for the whole process would
// cost memory where it matters: a long run's goal would grow with its live
// heap times the larger factor. A floor costs at most the floor.
//
// How: the runtime's goal is max(live × (1 + p/100), 4 MiB × p/100), where
// p is the GOGC percent and live the heap marked by the last cycle. Start
// sets p so that this is max(live × (1 + base/100), floor), and re-sets it
// after every cycle from a finalizer (the standard way to hear of a
// completed cycle): Percent is the rule. The environment's GOMEMLIMIT
// still caps the goal; a GOGC in the environment turns the floor off
// (Popsim).
//
// This package is for the commands' main functions and the benchmark
// harness only: it changes when the collector runs, never what a run
// computes, and it uses the finalizer goroutine, which the engines and the
// simulator must not.
package gcfloor
