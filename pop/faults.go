package pop

import (
	"fmt"

	"popsim/model"
)

// Faults decides, as data handed to the broker before a call, which store
// writes fail: no callback ever runs during a call. Every write the broker
// attempts (a produced message that passed validation, a revive's retry
// copy) has an ordinal: 1, 2, 3 … for the life of the broker (it survives
// Restart). A write fails when a counted rule in Writes matches it, or else
// when FaultDraw(Seed, ordinal) < the probability that applies to its topic
// (WritePPM, raised to RetryWritePPM for retry topics). Each failure is
// reported in the result of the call it happened in (WriteFailure), so a
// driver traces it after the call returns.
type Faults struct {
	Seed uint64
	// WritePPM fails any store write with this probability, in parts per
	// million (0..1000000).
	WritePPM int64
	// RetryWritePPM fails writes to retry topics (%RETRY%…: revive's retry
	// copies) with this probability (0..1000000).
	RetryWritePPM int64
	// ReviveReadPPM fails the checkpoint path's revive reads of a message
	// (EscapeBridge.getMessageAsync completing exceptionally) with this
	// probability (0..1000000), decided by FaultDraw(Seed^readSalt, n) for
	// the n-th read while it is non-zero.
	ReviveReadPPM int64
	// LockBusyPPM makes a pop's tryLock find the lock held by a concurrent
	// request with this probability (0..1000000), decided by
	// FaultDraw(Seed^lockSalt, n) for the n-th tryLock while it is
	// non-zero: KV, the group@topic lock (the whole pop answers empty and
	// long-polls); FS, one queue's lock (that queue is skipped).
	LockBusyPPM int64
	// Writes are counted rules, checked first and in order: the first rule
	// whose topic and queue match and whose Count is not 0 fails the write
	// (and, when Count > 0, uses one up).
	Writes []WriteFault
}

// WriteFault fails the next Count writes to Topic (queue QueueID, or any
// queue when QueueID < 0); a negative Count fails them all.
type WriteFault struct {
	Topic   string
	QueueID int32
	Count   int64
}

// WriteFailure is one store write that failed.
type WriteFailure struct {
	Ordinal uint64 // the write's ordinal (0 for a refused write)
	// Refused: the store refused the message rather than a fault failing
	// it: a topic name too long for it (HookUtils.checkBeforePutMessage:
	// over 127 bytes unless a %RETRY% topic, over 255 in any case), which
	// a broker writing a retry copy for a long group and topic can meet.
	Refused bool
	Topic   string
	QueueID int32
	// Msg and UniqKey name the message that was not written.
	Msg     model.MsgID
	UniqKey string
}

// FaultDraw is the pure function behind Faults' probabilities: a value in
// [0, 1000000) from the seed and a write's ordinal (the SplitMix64
// finaliser of seed + ordinal·golden ratio, reduced modulo 10^6). The
// write fails when FaultDraw(seed, ordinal) < ppm.
func FaultDraw(seed, ordinal uint64) int64 {
	z := seed + ordinal*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return int64(z % 1_000_000)
}

// Validate reports the first field outside its range.
func (f *Faults) Validate() error {
	for _, p := range []struct {
		name string
		v    int64
	}{{"writePPM", f.WritePPM}, {"retryWritePPM", f.RetryWritePPM}, {"reviveReadPPM", f.ReviveReadPPM}, {"lockBusyPPM", f.LockBusyPPM}} {
		if p.v < 0 || p.v > 1_000_000 {
			return fmt.Errorf("pop: faults %s = %d out of range: want 0..1000000 (parts per million)", p.name, p.v)
		}
	}
	for i, w := range f.Writes {
		if err := model.ValidateTopic(w.Topic); err != nil {
			return fmt.Errorf("pop: faults writes[%d]: %v", i, err)
		}
	}
	return nil
}

// SetFaults replaces the fault set (the broker keeps its own copy, whose
// counted rules it uses up). Faults{} turns every fault off.
func (b *Broker) SetFaults(f Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	f.Writes = append([]WriteFault(nil), f.Writes...)
	b.faults = f
	b.writeFaults, b.retryWriteFaults = len(f.Writes) != 0 || f.WritePPM != 0, f.RetryWritePPM != 0
	return nil
}

// failed reports that f describes a write that did not happen.
func (f WriteFailure) failed() bool { return f.Ordinal != 0 || f.Refused }

// storeRefusesTopic is the topic rule of HookUtils.checkBeforePutMessage:
// the store refuses (MESSAGE_ILLEGAL) a message whose topic is longer than
// 127 bytes unless it is a %RETRY% topic, and any longer than 255.
func storeRefusesTopic(t string) bool {
	return len(t) > model.MaxRetryOrDLQTopicLength || len(t) > model.MaxTopicLength && !model.IsRetryTopic(t)
}

// writeFailsTo numbers a write attempt, of a message to queue qid of
// topic (a retry topic: retry, model.IsRetryTopic), and decides whether it
// fails. It inlines: a write no fault set can fail (writeFaults;
// retryWriteFaults, to a retry topic), as most are, is only counted.
func (b *Broker) writeFailsTo(topic string, qid int32, retry bool) (uint64, bool) {
	b.writes++
	return b.writes, (b.writeFaults || retry && b.retryWriteFaults) && b.writeFault(topic, qid, retry)
}

// writeFault decides whether write number b.writes, to queue qid of
// topic (retry: a retry topic), fails: the first counted rule that
// matches it, else a draw.
func (b *Broker) writeFault(topic string, qid int32, retry bool) bool {
	f := &b.faults
	for i := range f.Writes {
		w := &f.Writes[i]
		if w.Count != 0 && w.Topic == topic && (w.QueueID < 0 || w.QueueID == qid) {
			if w.Count > 0 {
				w.Count--
			}
			return true
		}
	}
	p := f.WritePPM
	if retry {
		p = max(p, f.RetryWritePPM)
	}
	return p > 0 && FaultDraw(f.Seed, b.writes) < p
}
