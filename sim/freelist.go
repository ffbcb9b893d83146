package sim

// takeFree pops the last of the recycled values a free list keeps (nil
// when it is empty), clearing its slot so the list holds no stale
// pointer. The simulator's request, task and held-message free lists all
// take from their end (last recycled, first reused).
func takeFree[T any](free *[]*T) *T {
	n := len(*free)
	if n == 0 {
		return nil
	}
	v := (*free)[n-1]
	(*free)[n-1] = nil
	*free = (*free)[:n-1]
	return v
}
