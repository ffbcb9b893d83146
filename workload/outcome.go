package workload

import (
	"fmt"
	"math/bits"
	"strconv"

	"popsim/workload/pcg"
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
	// AckedNotDone: the listener reports success, so the consumer acks,
	// but the application's own commit (its business side effect) then
	// fails: the message is acked and not done. To the broker it is a
	// success; the loss is on the application's side of the at-least-once
	// boundary (it acked before its commit).
	AckedNotDone
)

// Succeeded reports whether the consumer acks the message: Success and
// AckedNotDone.
func (o Outcome) Succeeded() bool { return o == Success || o == AckedNotDone }

func (o Outcome) String() string {
	switch o {
	case Success:
		return "Success"
	case ReconsumeLater:
		return "ReconsumeLater"
	case Exception:
		return "Exception"
	case AckedNotDone:
		return "AckedNotDone"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Outcomes is the probability of each Outcome, in parts per million, and
// the poison messages: messages whose every delivery throws, whatever the
// draw. The zero value is always Success.
type Outcomes struct {
	reconsumeLaterPPM, exceptionPPM int64
	// ackedNotDonePPM: the listener succeeds and the commit after the
	// ack fails (AckedNotDone).
	ackedNotDonePPM int64
	// poisonEvery > 0 poisons the messages numbered poisonEvery,
	// 2*poisonEvery, … (the simulator numbers messages 1, 2, 3 … in the
	// order they are stored; copies keep the number), at most
	// poisonCount of them when poisonCount > 0.
	poisonEvery, poisonCount int64
}

// Nacks reports whether a delivery can end in ReconsumeLater, which a POP
// consumer answers with a renewal (changeInvisibleTime).
func (o Outcomes) Nacks() bool { return o.reconsumeLaterPPM > 0 }

// maxPoison bounds poison_every and poison_count (message numbers are
// 32-bit).
const maxPoison = 1<<32 - 1

// WithPoison returns o with poison messages: every delivery of the
// messages numbered every, 2*every, … throws (Exception); count > 0 stops
// after that many poison messages, 0 poisons all of them. every 0 means no
// poison message (count must then be 0).
func (o Outcomes) WithPoison(every, count int64) (Outcomes, error) {
	if every < 0 || every > maxPoison {
		return Outcomes{}, fmt.Errorf("workload: outcomes poison_every %d out of range: want 1 to %d (0: no poison message)", every, int64(maxPoison))
	}
	if count < 0 || count > maxPoison {
		return Outcomes{}, fmt.Errorf("workload: outcomes poison_count %d out of range: want 0 (no limit) to %d", count, int64(maxPoison))
	}
	if every == 0 && count != 0 {
		return Outcomes{}, fmt.Errorf("workload: outcomes poison_count %d without poison_every: want poison_every=N too", count)
	}
	o.poisonEvery, o.poisonCount = every, count
	return o, nil
}

// PoisonEvery returns the poison messages' period (0: none).
func (o Outcomes) PoisonEvery() int64 { return o.poisonEvery }

// PoisonCount returns how many poison messages there are at most (0: no
// limit).
func (o Outcomes) PoisonCount() int64 { return o.poisonCount }

// Poisoned reports whether message number n (1, 2, 3 …) is a poison
// message.
func (o Outcomes) Poisoned(n uint64) bool {
	if o.poisonEvery <= 0 || n == 0 || n%uint64(o.poisonEvery) != 0 {
		return false
	}
	return o.poisonCount == 0 || n/uint64(o.poisonEvery) <= uint64(o.poisonCount)
}

// CanFail reports whether any delivery can end other than in Success.
func (o Outcomes) CanFail() bool {
	return o.SuccessPPM() < ppmOne || o.poisonEvery > 0 || o.ackedNotDonePPM > 0
}

// WithAckedNotDone returns o where a delivery the listener would consume
// successfully is acked and then fails its commit (AckedNotDone) with
// probability ppm (of all deliveries; at most the success probability).
func (o Outcomes) WithAckedNotDone(ppm int64) (Outcomes, error) {
	if err := checkPPM("outcomes ack_then_fail", ppm); err != nil {
		return Outcomes{}, err
	}
	if ppm > o.SuccessPPM() {
		return Outcomes{}, fmt.Errorf("workload: outcomes reconsume_later+exception+ack_then_fail %dppm out of range: want at most %d", o.reconsumeLaterPPM+o.exceptionPPM+ppm, ppmOne)
	}
	o.ackedNotDonePPM = ppm
	return o, nil
}

// AckedNotDonePPM returns the probability of AckedNotDone in ppm.
func (o Outcomes) AckedNotDonePPM() int64 { return o.ackedNotDonePPM }

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
	return Outcomes{reconsumeLaterPPM: reconsumeLaterPPM, exceptionPPM: exceptionPPM}, nil
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
// rest of the stream. It does not know the message: see SampleFor (of
// number 0, which no poison has). A pointer receiver, as SampleFor's: a
// value one copied the five words of o into each call's registers and
// stack.
func (o *Outcomes) Sample(r *pcg.Rand) Outcome { return o.SampleFor(r, 0) }

// SampleFor draws the outcome of a delivery of message number n: Exception
// for a poison message, else Sample's draw. It makes exactly one call on r
// either way, so poisoning a message never shifts the rest of the stream.
// The draw, Int64N(ppmOne), is written out (the constant bound needs no
// power-of-two test, and the draw is not a call): SampleFor is the one
// call a delivery's outcome takes, where it took three (BenchmarkRunDefault:
// 1 401.3 -> 1 399.8 M instructions outside the runtime, callgrind;
// hot topic 578.4 -> 577.7 M).
func (o *Outcomes) SampleFor(r *pcg.Rand, n uint64) Outcome {
	hi, lo := bits.Mul64(r.Uint64(), ppmOne)
	if lo < ppmOne {
		hi = r.Redraw(hi, lo, ppmOne)
	}
	switch x := int64(hi); {
	case o.Poisoned(n):
		return Exception
	case x < o.reconsumeLaterPPM:
		return ReconsumeLater
	case x < o.reconsumeLaterPPM+o.exceptionPPM:
		return Exception
	case x < o.reconsumeLaterPPM+o.exceptionPPM+o.ackedNotDonePPM:
		return AckedNotDone
	}
	return Success
}

// String returns the canonical form accepted by ParseOutcomes, with
// probabilities as decimals: "outcomes(reconsume_later=0.01,exception=0.001)";
// the poison keys and ack_then_fail follow only when set.
func (o Outcomes) String() string {
	s := "outcomes(reconsume_later=" + fmtPPM(o.reconsumeLaterPPM) + ",exception=" + fmtPPM(o.exceptionPPM)
	if o.poisonEvery > 0 {
		s += ",poison_every=" + strconv.FormatInt(o.poisonEvery, 10)
	}
	if o.poisonCount > 0 {
		s += ",poison_count=" + strconv.FormatInt(o.poisonCount, 10)
	}
	if o.ackedNotDonePPM > 0 {
		s += ",ack_then_fail=" + fmtPPM(o.ackedNotDonePPM)
	}
	return s + ")"
}
