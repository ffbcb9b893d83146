package scenarios

import (
	"fmt"
	"math"
)

// Queueing theory for validating the simulator (guide: "Validating the
// simulator against queueing theory"). With faults off, a long invisible
// time and batch size 1, POP consumers sharing a backlog are an M/M/c
// queue, and Pull consumers that each own a queue are c independent M/M/1
// queues fed λ/c each. Rates are per second, times are seconds.

// MMc is an M/M/c queue: Poisson arrivals at Lambda, C servers each
// serving at Mu (exponential service times), one FIFO queue.
type MMc struct {
	Lambda float64 // arrivals per second
	Mu     float64 // completions per second per server
	C      int     // servers
}

// Check reports whether the queue is well defined and stable (ρ < 1).
func (q MMc) Check() error {
	if !(q.Lambda > 0) || !(q.Mu > 0) || q.C < 1 || math.IsInf(q.Lambda, 0) || math.IsInf(q.Mu, 0) {
		return fmt.Errorf("scenarios: M/M/c with λ=%g, μ=%g, c=%d: want λ > 0, μ > 0, c >= 1", q.Lambda, q.Mu, q.C)
	}
	if q.Rho() >= 1 {
		return fmt.Errorf("scenarios: M/M/c with λ=%g, μ=%g, c=%d is unstable: ρ = λ/(cμ) = %.4g, want < 1", q.Lambda, q.Mu, q.C, q.Rho())
	}
	return nil
}

// Load is the offered load a = λ/μ in Erlangs.
func (q MMc) Load() float64 { return q.Lambda / q.Mu }

// Rho is the utilisation ρ = a/c.
func (q MMc) Rho() float64 { return q.Load() / float64(q.C) }

// ErlangB is the blocking probability of an M/M/c/c loss system with
// offered load a, by the stable recursion B0 = 1, Bk = a·Bk-1/(k + a·Bk-1).
func ErlangB(a float64, c int) float64 {
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	return b
}

// ErlangC is the probability that an arrival waits in an M/M/c queue with
// offered load a: C = B / (1 − ρ(1 − B)), ρ = a/c < 1.
func ErlangC(a float64, c int) float64 {
	b := ErlangB(a, c)
	rho := a / float64(c)
	return b / (1 - rho*(1-b))
}

// PWait is the Erlang C probability of waiting.
func (q MMc) PWait() float64 { return ErlangC(q.Load(), q.C) }

// Wq is the mean time in queue: C/(cμ − λ).
func (q MMc) Wq() float64 { return q.PWait() / (float64(q.C)*q.Mu - q.Lambda) }

// W is the mean response time (wait plus service): Wq + 1/μ.
func (q MMc) W() float64 { return q.Wq() + 1/q.Mu }

// L is the mean number in the system (Little's law, λW).
func (q MMc) L() float64 { return q.Lambda * q.W() }

// ResponseCCDF is P(T > t) for the response time T = wait + service. The
// wait is 0 with probability 1−C and otherwise exponential with rate
// θ = cμ − λ; service is exponential with rate μ, independent of it.
func (q MMc) ResponseCCDF(t float64) float64 {
	if t <= 0 {
		return 1
	}
	mu, theta, c := q.Mu, float64(q.C)*q.Mu-q.Lambda, q.PWait()
	var waited float64 // P(Exp(θ) + Exp(μ) > t)
	if math.Abs(theta-mu) < 1e-9*mu {
		waited = (1 + mu*t) * math.Exp(-mu*t)
	} else {
		waited = (theta*math.Exp(-mu*t) - mu*math.Exp(-theta*t)) / (theta - mu)
	}
	return (1-c)*math.Exp(-mu*t) + c*waited
}

// ResponseQuantile returns the p-quantile (0 < p < 1) of the response time
// by bisection on ResponseCCDF, to a relative precision of 1e-12.
func (q MMc) ResponseQuantile(p float64) float64 {
	target := 1 - p
	lo, hi := 0.0, 1/q.Mu
	for q.ResponseCCDF(hi) > target {
		lo, hi = hi, hi*2
	}
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		mid := (lo + hi) / 2
		if q.ResponseCCDF(mid) > target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// MM1 is one M/M/1 queue. c independent M/M/1 queues fed λ/c each (queue
// owning Pull consumers) are MM1{Lambda: λ/c, Mu: μ}.
type MM1 struct {
	Lambda float64
	Mu     float64
}

// Split returns the M/M/1 queue each of c queue-owning servers sees when
// a Poisson stream λ is split evenly (at random) among them.
func Split(lambda, mu float64, c int) MM1 { return MM1{Lambda: lambda / float64(c), Mu: mu} }

// Check reports whether the queue is well defined and stable.
func (q MM1) Check() error { return MMc{Lambda: q.Lambda, Mu: q.Mu, C: 1}.Check() }

// W is the mean response time 1/(μ − λ).
func (q MM1) W() float64 { return 1 / (q.Mu - q.Lambda) }

// ResponseQuantile is the p-quantile of the exponential response time,
// −ln(1−p)/(μ − λ); the p99 is ln(100)/(μ − λ).
func (q MM1) ResponseQuantile(p float64) float64 { return -math.Log(1-p) / (q.Mu - q.Lambda) }
