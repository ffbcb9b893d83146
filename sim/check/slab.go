package check

// slabBits sets the size of a slab chunk (1<<slabBits elements).
const slabBits = 12

// slab is an append-only array in fixed-size chunks: growing it never
// copies what it holds (a doubling slice of every settled message's
// tombstone copied megabytes on each growth).
type slab[T any] struct {
	chunks [][]T
	n      int32
}

// push appends v and returns its index.
func (s *slab[T]) push(v T) int32 {
	c := int(s.n >> slabBits)
	if c == len(s.chunks) {
		s.chunks = append(s.chunks, make([]T, 0, 1<<slabBits))
	}
	s.chunks[c] = append(s.chunks[c], v)
	s.n++
	return s.n - 1
}

// at is element i.
func (s *slab[T]) at(i int32) *T {
	return &s.chunks[i>>slabBits][i&(1<<slabBits-1)]
}

// len is the number of elements pushed.
func (s *slab[T]) len() int32 { return s.n }
