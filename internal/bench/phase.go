package bench

import (
	"runtime"
)

// PhaseAllocs runs PopAck32 rounds outside the benchmark harness and
// returns the heap allocations per message of the pop phase and of the ack
// phase separately, counted with runtime.ReadMemStats around each phase
// after warm rounds. Allocation counts do not depend on timing, so this is
// what a CI gate can rely on.
func PhaseAllocs(inFlight int, cache bool, warm, rounds int) (popAllocs, ackAllocs float64, err error) {
	f, err := newFixture(cache)
	if err != nil {
		return 0, 0, err
	}
	if _, err := f.hold(inFlight, false); err != nil {
		return 0, 0, err
	}
	f.dropConsumed()
	if err := f.stock(int64((warm+rounds)*Batch/Queues + Batch)); err != nil {
		return 0, 0, err
	}
	var ms runtime.MemStats
	var popN, ackN uint64
	for i := 0; i < warm+rounds; i++ {
		runtime.ReadMemStats(&ms)
		a0 := ms.Mallocs
		res, err := f.popBatch()
		if err != nil {
			return 0, 0, err
		}
		runtime.ReadMemStats(&ms)
		a1 := ms.Mallocs
		if err := f.ackBatch(res); err != nil {
			return 0, 0, err
		}
		runtime.ReadMemStats(&ms)
		if i >= warm {
			popN += a1 - a0
			ackN += ms.Mallocs - a1
		}
		f.tick()
	}
	msgs := float64(rounds * Batch)
	return float64(popN) / msgs, float64(ackN) / msgs, nil
}
