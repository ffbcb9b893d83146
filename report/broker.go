package report

import (
	"bytes"
	"fmt"

	"popsim/model"
)

// writeBroker writes the broker's utilisation and queueing, when the run
// had a broker cost model.
func writeBroker(b *bytes.Buffer, u *model.BrokerUsage) {
	if u == nil {
		return
	}
	b.WriteString("## The broker's own limits\n\n")
	fmt.Fprintf(b, "The run had a broker cost model (docs/calibration.md): %d cores, busy %s %% of the safety phase, %s %% of it in the periodic work (revive, scans, cache cleanup).\n\n",
		u.Cores, fmtFloat(100*u.Utilization, 1), fmtFloat(100*u.Background, 1))
	b.WriteString("| pool | threads | requests | threads busy | wait mean ms | wait p99 ms | service mean ms | service p99 ms |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
	row := func(name, threads string, n int64, util string, q, s model.Latency) {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name, threads, itoa(n), util, fmtMs(q.Mean), fmtMs(q.P99), fmtMs(s.Mean), fmtMs(s.P99))
	}
	for _, p := range u.Pools {
		if p.Requests == 0 {
			continue
		}
		row(mdText(p.Name), itoa(int64(p.Threads)), p.Requests, fmtFloat(100*p.Utilization, 1)+" %", p.QueueDelay, p.Service)
	}
	row("all requests", "", u.QueueDelay.Count, "", u.QueueDelay, u.Service)
	b.WriteString("\n")
	if u.LockWaits > 0 {
		fmt.Fprintf(b, "%s pops found their pop lock held and waited for it: mean %s ms, p99 %s ms.\n\n", itoa(u.LockWaits), fmtMs(u.LockWait.Mean), fmtMs(u.LockWait.P99))
	}
	writeEachBroker(b, u.Brokers)
	b.WriteString("A request waits for a thread of its pool, a pop then for its pop lock, then for a core; the engine serves it when it gets the core and its answer leaves when its service ends. " +
		"A pool whose threads are busy near 100 % or cores near 100 % is the bottleneck: its wait grows without bound as the load approaches it.\n\n")
}

// writeEachBroker writes each broker's own usage when there were several
// (the table above adds them up).
func writeEachBroker(b *bytes.Buffer, bs []model.BrokerUsage) {
	if len(bs) == 0 {
		return
	}
	fmt.Fprintf(b, "The %d brokers (the rows above add them up):\n\n| broker | cores | cores busy | requests | wait mean ms | wait p99 ms |\n|---|--:|--:|--:|--:|--:|\n", len(bs))
	for i := range bs {
		u := &bs[i]
		fmt.Fprintf(b, "| %d | %d | %s %% | %s | %s | %s |\n", i+1, u.Cores, fmtFloat(100*u.Utilization, 1), itoa(u.QueueDelay.Count), fmtMs(u.QueueDelay.Mean), fmtMs(u.QueueDelay.P99))
	}
	b.WriteString("\n")
}
