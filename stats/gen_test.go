package stats

import (
	"math"
	"math/rand/v2"
)

// Test data generators, each from an explicit seeded PCG source.

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5747)) }

// normals returns n i.i.d. N(mu, sigma²) values.
func normals(r *rand.Rand, n int, mu, sigma float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = mu + sigma*r.NormFloat64()
	}
	return xs
}

// ar1 returns n values of the stationary AR(1) process
// X_t = mu + phi·(X_t-1 - mu) + sqrt(1-phi²)·e_t: marginal N(mu, 1), lag-k
// correlation phi^k, and variance of the mean about (1+phi)/(1-phi)/n.
func ar1(r *rand.Rand, n int, mu, phi float64) []float64 {
	xs := make([]float64, n)
	s := math.Sqrt(1 - phi*phi)
	x := r.NormFloat64()
	for i := range xs {
		xs[i] = mu + x
		x = phi*x + s*r.NormFloat64()
	}
	return xs
}

// mm1 returns the sojourn (response) times of n customers of an M/M/1
// FIFO queue with arrival rate lambda and service rate mu, by Lindley's
// recursion W_i+1 = max(0, W_i + S_i - A_i+1), starting with the first
// customer behind queued customers with queued service times (0: empty).
// In steady state the sojourn time is Exp(mu - lambda).
func mm1(r *rand.Rand, n int, lambda, mu float64, queued int) []float64 {
	var w float64
	for range queued {
		w += r.ExpFloat64() / mu
	}
	xs := make([]float64, n)
	for i := range xs {
		s := r.ExpFloat64() / mu
		xs[i] = w + s
		w = max(0, w+s-r.ExpFloat64()/lambda)
	}
	return xs
}
