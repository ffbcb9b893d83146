package share

import (
	"sort"

	"popsim/model"
)

// logBatch is one produced record batch: offsets base..last.
type logBatch struct{ base, last int64 }

// partitionLog is one partition's log and its batch boundaries
// (acquisition is batch-aligned). The log start offset only hides the
// records below it from fetches: like a segment that still holds them, the
// log keeps them, so a lease on a record the start offset passed still
// knows its message.
type partitionLog struct {
	start   int64
	recs    []*model.Message // recs[i] is at offset i
	batches []logBatch
}

// end is the log end offset: the offset the next record gets.
func (l *partitionLog) end() int64 { return int64(len(l.recs)) }

// at returns the record at off, below the log start included; nil outside
// the log.
func (l *partitionLog) at(off int64) *model.Message {
	if off < 0 || off >= l.end() {
		return nil
	}
	return l.recs[off]
}

// append stores a batch and returns its base offset.
func (l *partitionLog) append(msgs []*model.Message) int64 {
	base := l.end()
	l.recs = append(l.recs, msgs...)
	l.batches = append(l.batches, logBatch{base, base + int64(len(msgs)) - 1})
	return base
}

// batchAt returns the index of the batch holding off, or -1.
func (l *partitionLog) batchAt(off int64) int {
	i := sort.Search(len(l.batches), func(i int) bool { return l.batches[i].last >= off })
	if i < len(l.batches) && l.batches[i].base <= off {
		return i
	}
	return -1
}

// truncate moves the log start offset up to off (DeleteRecords).
func (l *partitionLog) truncate(off int64) {
	l.start = max(l.start, min(off, l.end()))
}
