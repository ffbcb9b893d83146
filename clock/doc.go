// Package clock is popsim's notion of time.
//
// Virtual time is an integer count of microseconds since the Unix epoch
// (Time) and durations are integer microseconds (Duration). Integers keep
// every run exact and machine independent: no float rounding, no wall clock.
//
// The simulator owns one Virtual clock and moves it forward as it dispatches
// events; Virtual never moves backwards and panics if asked to, because that
// is always a scheduler bug. Real adapts the wall clock to the same types and
// exists only for benchmarks (cmd/popbench) and the live server (serve/);
// pop/, model/, sim/ and workload/ must never use it.
//
// RocketMQ itself speaks milliseconds (popTime, invisibleTime, receipt
// handles). Time.Millis and FromMillis convert at that boundary.
//
//	c := clock.NewVirtual(clock.Epoch)
//	c.Advance(1500 * clock.Millisecond)
//	nowMs := c.Now().Millis()
package clock
