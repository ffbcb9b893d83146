// Package pcg is the simulator's random stream: the 128-bit PCG
// generator with the DXSM output function, the very stream math/rand/v2's
// PCG gives for the same two seed words, as a concrete type whose draws
// the compiler can inline at the call site.
//
// math/rand/v2 reaches its source through the rand.Source interface, so
// each draw there costs a dynamic call besides the bounded-draw helper's
// own. Rand draws Uint64, Int64N, IntN, Int32N, Uint64N, Uint32 and
// Float64 exactly as *rand.Rand over rand.NewPCG with the same seeds does
// (TestMatchesMathRand checks it draw for draw over many seeds and
// bounds), so replacing one by the other changes no value drawn. A Rand
// is also a rand.Source: a caller that needs a draw Rand does not offer
// wraps it in rand.New and still draws from the same state. A hot caller
// may write a bounded draw out (the first draw and its product with the
// bound inline there, Redraw is the rare rest), where a bounded draw is a
// call.
//
// Deterministic: no global state, no wall clock. Layer 3, as workload.
package pcg
