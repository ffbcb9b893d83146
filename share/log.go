package share

import (
	"sort"

	"popsim/model"
)

// logBatch is one produced record batch: offsets base..last.
type logBatch struct{ base, last int64 }

// partitionLog is one partition's log: records from the log start offset
// on, and the batch boundaries (acquisition is batch-aligned). The batch
// holding the log start offset may begin below it after a truncation.
type partitionLog struct {
	start   int64
	recs    []*model.Message // recs[i] is at offset start+i
	batches []logBatch
}

// end is the log end offset: the offset the next record gets.
func (l *partitionLog) end() int64 { return l.start + int64(len(l.recs)) }

// at returns the record at off, nil when off is outside the log.
func (l *partitionLog) at(off int64) *model.Message {
	if off < l.start || off >= l.end() {
		return nil
	}
	return l.recs[off-l.start]
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

// truncate moves the log start offset up to off (DeleteRecords), dropping
// the records below it and the batches wholly below it.
func (l *partitionLog) truncate(off int64) {
	if off <= l.start {
		return
	}
	if off > l.end() {
		off = l.end()
	}
	l.recs = l.recs[off-l.start:]
	l.start = off
	i := sort.Search(len(l.batches), func(i int) bool { return l.batches[i].last >= off })
	l.batches = l.batches[i:]
}
