package sim

import (
	"popsim/clock"
	"popsim/proxy"
)

// retryAttemptSlack is what one retry attempt may take beyond its backoff
// in the liveness phase: the revive that writes the retry copy, the
// response and the time the copy waits for the next pop are seconds; this
// is a generous bound for them (a consumer's PollTime is added beside it).
const retryAttemptSlack = 30 * clock.Second

// maxDrainBudget is the longest liveness phase a run gets (Drain's upper
// limit).
const maxDrainBudget = 720 * clock.Hour

// RetryChain is the longest a message can legitimately keep being retried
// once faults stop: per consumer whose outcomes can fail, every attempt
// fails and each waits its kind's longest backoff, from the first attempt
// to the end of its retry ladder. Call it on a defaulted config.
//
//   - pop-push: changeInvisibleTime to popDelayLevel[reconsumeTimes] for
//     reconsumeTimes 0..maxReconsumeTimes-1, then one more delay of at most
//     the last level (checkNeedAckOrDelay by age), after which the copy is
//     dropped on receipt;
//   - simple: the group's maxAttempts (retryMaxTimes + 1) attempts, each
//     waiting the longer of the CUSTOMIZED retry delay and the invisible
//     time (an exception is a lease left to expire), then the proxy's DLQ;
//   - pull: maxReconsumeTimes local retries on the popDelayLevel ladder,
//     then the DLQ.
//
// Each attempt adds the consumer's PollTime and retryAttemptSlack, and a
// chain adds one invisible time (a lease of a consumer that crashed in the
// safety phase expires before its retry starts). Consumers that never fail
// a message have no chain. The result is at most maxDrainBudget.
func (c Config) RetryChain() clock.Duration {
	var worst clock.Duration
	for i := range c.Consumers {
		worst = max(worst, c.consumerRetryChain(&c.Consumers[i]))
	}
	return min(worst, maxDrainBudget)
}

func (c Config) consumerRetryChain(cs *ConsumerSpec) clock.Duration {
	if !cs.Outcomes.CanFail() {
		return 0
	}
	var d clock.Duration
	switch set := cs.Settings.(type) {
	case *PopPushSettings:
		slack := set.PollTime + retryAttemptSlack
		d = set.InvisibleTime
		for r := 0; r < int(set.MaxReconsumeTimes); r++ {
			d += ladderDelay(r) + slack
		}
		d += ladderDelay(len(popDelayLevel)) + 2*slack
	case *SimpleSettings:
		slack := set.PollTime + retryAttemptSlack
		d = set.InvisibleTime
		for r := int32(0); r <= c.groupRetryMaxTimes(cs.Group); r++ {
			d += max(proxy.RetryDelay(r), set.InvisibleTime) + slack
		}
	case *PullSettings:
		slack := set.PollTime + retryAttemptSlack
		for r := 0; r < int(set.MaxReconsumeTimes); r++ {
			d += ladderDelay(r) + slack
		}
	}
	return d
}

// ladderDelay is popDelayLevel[level] as a duration.
func ladderDelay(level int) clock.Duration {
	return clock.Duration(popDelaySeconds(level)) * clock.Second
}

// groupRetryMaxTimes is the configured group's retryMaxTimes (16 when the
// group is not listed).
func (c Config) groupRetryMaxTimes(name string) int32 {
	for _, g := range c.Groups {
		if g.Name == name && g.RetryMaxTimes > 0 {
			return g.RetryMaxTimes
		}
	}
	return 16
}

// DrainBudget is how long the liveness phase may last: Drain, extended to
// RetryChain while the run is still retrying (see sim.retrying). A
// message's retry ladder therefore never outlives the budget, while a run
// whose unfinished messages nobody holds any more (lost) still stops at
// Drain.
func (c Config) DrainBudget() clock.Duration { return max(c.Drain, c.RetryChain()) }
