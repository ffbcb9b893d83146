package pop

// Dense rows: per-queue state the engine looks up on every stage or
// arrival (the offsets' slots, the cache's queues, long polling's sets)
// is kept in rows indexed by group-topic pair and then by queue, instead
// of a map keyed by qkey.

// rowCell returns rows[pair][i] for writing, growing rows and the row
// with zero values as needed. Growing a row moves it: pointers into it
// taken before do not see later writes.
func rowCell[T any](rows *[][]T, pair uint32, i int) *T {
	for int(pair) >= len(*rows) {
		*rows = append(*rows, nil)
	}
	r := (*rows)[pair]
	for i >= len(r) {
		var zero T
		r = append(r, zero)
	}
	(*rows)[pair] = r
	return &r[i]
}
