package workload

import (
	"fmt"
	"strconv"

	"popsim/clock"
	"popsim/workload/pcg"
)

// maxLimitCount bounds Limit's count.
const maxLimitCount = 1_000_000_000_000

// Limit stops an arrival process after count arrivals or at origin+span,
// whichever comes first; zero disables that bound. The span is half-open:
// an arrival exactly at origin+span is not produced. Limit and its inner
// process share the origin (the now of the first Next call).
type Limit struct {
	inner Arrivals
	count int64
	span  clock.Duration
	anchor
	n    int64
	done bool
}

// NewLimit wraps a: count 0 to 1e12, span 0 to MaxSpan, at least one
// positive.
func NewLimit(a Arrivals, count int64, span clock.Duration) (*Limit, error) {
	if a == nil {
		return nil, fmt.Errorf("workload: limit process is nil: want an arrival process")
	}
	if count < 0 || count > maxLimitCount {
		return nil, fmt.Errorf("workload: limit count %d out of range: want 0 to %d", count, int64(maxLimitCount))
	}
	if err := checkSpan("limit for", span, 0); err != nil {
		return nil, err
	}
	if count == 0 && span == 0 {
		return nil, fmt.Errorf("workload: limit has neither count nor for: want at least one > 0")
	}
	return &Limit{inner: a, count: count, span: span}, nil
}

// Next implements Arrivals.
func (l *Limit) Next(r *pcg.Rand, now clock.Time) (clock.Time, bool) {
	origin := l.start(now)
	if l.done || (l.count > 0 && l.n >= l.count) {
		l.done = true
		return 0, false
	}
	at, ok := l.inner.Next(r, now)
	if !ok || (l.span > 0 && at.Sub(origin) >= l.span) {
		l.done = true
		return 0, false
	}
	l.n++
	return at, true
}

func (l *Limit) String() string {
	s := "limit(" + l.inner.String()
	if l.count > 0 {
		s += ",count=" + strconv.FormatInt(l.count, 10)
	}
	if l.span > 0 {
		s += ",for=" + fmtDur(l.span)
	}
	return s + ")"
}
