package pop

import "popsim/model"

// LogSpare carries full-size log chunks from one broker's life to another
// broker's, so that a process making many runs one after another (a
// benchmark, a sweep's worker) stores a run's messages in the chunks of
// the last run's instead of allocating them anew: the runtime otherwise
// returns a finished run's pages to the system and the next run faults
// them back in, and the collector runs more often as the new run's heap
// grows from nothing. A chunk in a LogSpare is cleared (as a pooled one
// is: poisoned with the invariants build tag), so no message of the run
// that held it can reach another; which chunk a queue gets changes no
// answer the broker gives. A LogSpare is for one goroutine's brokers at a
// time.
type LogSpare struct {
	chunks [][]model.Message
}

// Len is how many chunks s holds.
func (s *LogSpare) Len() int { return len(s.chunks) }

// UseSpare makes s the place b's queues take a new chunk from once b's
// own pool of released chunks is empty, before allocating one.
func (b *Broker) UseSpare(s *LogSpare) { b.logPool.spare = s }

// Recycle clears every full-size chunk b's queues hold and adds it to s,
// leaving the queues empty: b must not be used afterwards. Chunks in b's
// pool of released chunks and chunks from s that b never took stay where
// they are (s keeps the latter), so s holds at most what b's queues held
// and what it held before.
func (b *Broker) Recycle(s *LogSpare) {
	for _, name := range b.topicOrder {
		for _, q := range b.topics[name].queues {
			for k, c := range q.log.chunks {
				if cap(c) == logChunk {
					clear(c) // the entries past len(c) were never written
					s.chunks = append(s.chunks, poisoned(c[:logChunk]))
				}
				q.log.chunks[k] = nil
			}
			q.log, q.revs = msgLog{}, revWindow{}
		}
	}
	b.logPool = chunkPool{}
}

// poisoned returns c, a full-size chunk whose entries are zero, as a pool
// keeps it: with the invariants build tag every entry is poisonMsg, which
// take checks is intact; else as it is.
func poisoned(c []model.Message) []model.Message {
	if invariants {
		for i := range c {
			c[i] = poisonMsg
		}
	}
	return c
}
