package workload

import (
	"fmt"
	"math/rand/v2"
)

// Outcome is what a consumer's listener does with a delivered message.
type Outcome uint8

const (
	// Success: the consumer acks the message.
	Success Outcome = iota
	// ReconsumeLater: the listener asks for redelivery; a POP consumer
	// calls changeInvisibleTime (or lets the lease expire) so the broker
	// retries the message later.
	ReconsumeLater
	// Exception: the listener throws; the consumer neither acks nor
	// nacks, so the message comes back when its invisible time runs out.
	Exception
)

func (o Outcome) String() string {
	switch o {
	case Success:
		return "Success"
	case ReconsumeLater:
		return "ReconsumeLater"
	case Exception:
		return "Exception"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Outcomes is the probability of each Outcome, in parts per million. The
// zero value is always Success.
type Outcomes struct {
	reconsumeLaterPPM, exceptionPPM int64
}

// NewOutcomes returns the distribution with the given ppm of
// ReconsumeLater and Exception; each is 0 to 1,000,000, their sum is at
// most 1,000,000 and the remainder is Success.
func NewOutcomes(reconsumeLaterPPM, exceptionPPM int64) (Outcomes, error) {
	if err := checkPPM("outcomes reconsume_later", reconsumeLaterPPM); err != nil {
		return Outcomes{}, err
	}
	if err := checkPPM("outcomes exception", exceptionPPM); err != nil {
		return Outcomes{}, err
	}
	if sum := reconsumeLaterPPM + exceptionPPM; sum > ppmOne {
		return Outcomes{}, fmt.Errorf("workload: outcomes reconsume_later+exception %dppm out of range: want at most %d", sum, ppmOne)
	}
	return Outcomes{reconsumeLaterPPM, exceptionPPM}, nil
}

func checkPPM(field string, ppm int64) error {
	if ppm < 0 || ppm > ppmOne {
		return fmt.Errorf("workload: %s %dppm out of range: want 0 to %d", field, ppm, ppmOne)
	}
	return nil
}

// ReconsumeLaterPPM returns the probability of ReconsumeLater in ppm.
func (o Outcomes) ReconsumeLaterPPM() int64 { return o.reconsumeLaterPPM }

// ExceptionPPM returns the probability of Exception in ppm.
func (o Outcomes) ExceptionPPM() int64 { return o.exceptionPPM }

// SuccessPPM returns the probability of Success in ppm.
func (o Outcomes) SuccessPPM() int64 { return ppmOne - o.reconsumeLaterPPM - o.exceptionPPM }

// Sample draws an outcome. It always makes exactly one call on r, even when
// every message succeeds, so that changing a probability never shifts the
// rest of the stream.
func (o Outcomes) Sample(r *rand.Rand) Outcome {
	n := r.Int64N(ppmOne)
	switch {
	case n < o.reconsumeLaterPPM:
		return ReconsumeLater
	case n < o.reconsumeLaterPPM+o.exceptionPPM:
		return Exception
	}
	return Success
}

// String returns the canonical form accepted by ParseOutcomes, with
// probabilities as decimals: "outcomes(reconsume_later=0.01,exception=0.001)".
func (o Outcomes) String() string {
	return "outcomes(reconsume_later=" + fmtPPM(o.reconsumeLaterPPM) + ",exception=" + fmtPPM(o.exceptionPPM) + ")"
}
