package pop

import "popsim/model"

// prefetchAppend asks the CPU to bring into its cache the first cache
// line of queue q, and log entry m's three (192 bytes, cache-line aligned
// in a full-size chunk: one starts 12 KB into a block of whole pages)
// unless m is nil, and goes on without waiting for them: a load would
// hold the instructions after it until it is served, which from memory
// took as long as the write it reads ahead for (Broker.warmNext). No
// value the program sees changes, and a prefetch faults on no address.
//
//go:noescape
func prefetchAppend(m *model.Message, q *queue)
