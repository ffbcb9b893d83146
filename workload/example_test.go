package workload_test

import (
	"fmt"

	"popsim/clock"
	"popsim/workload"
	"popsim/workload/pcg"
)

func Example() {
	arr, err := workload.ParseArrivals("limit(const(2/s),count=3)")
	if err != nil {
		panic(err)
	}
	svc, err := workload.ParseDist("mix(0.9:const(5ms),0.1:const(30s))")
	if err != nil {
		panic(err)
	}
	out, _ := workload.NewOutcomes(100_000, 0)
	rng := pcg.New(1, 2)
	fmt.Println(arr, svc, "mean", svc.Mean())
	now := clock.Epoch
	for {
		at, ok := arr.Next(rng, now)
		if !ok {
			break
		}
		fmt.Println(at, svc.Sample(rng), out.Sample(rng))
		now = at
	}
	// Output:
	// limit(const(2/s),count=3) mix(0.9:const(5ms),0.1:const(30s)) mean 3.0045s
	// T+0s 0.005s Success
	// T+0.5s 0.005s Success
	// T+1s 0.005s ReconsumeLater
}

func ExampleParseDist() {
	d, err := workload.ParseDist("lognormal(p99=200ms, median=10ms)")
	fmt.Println(d, d.Mean(), err)
	_, err = workload.ParseDist("exp(0s)")
	fmt.Println(err)
	// Output:
	// lognormal(median=10ms,p99=200ms) 0.022913s <nil>
	// workload: exp mean 0s out of range: want 1us to 24h
}
