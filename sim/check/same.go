package check

import "unsafe"

// sameName is a == b for the names a trace repeats (topics, groups): the
// checker keeps the strings its events brought, so two copies of a name
// mostly share their bytes, and then the answer takes no call. (Go's ==
// on strings of one length calls the runtime's memequal, which tests for
// shared bytes first; the call and the registers a caller saves around it
// cost some twenty instructions at each of the checker's hot lookups.)
func sameName(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// samePlace is p == q, comparing the topics with sameName (after the
// numbers, which differ more often).
func samePlace(p, q place) bool {
	return p.offset == q.offset && p.queue == q.queue && sameName(p.topic, q.topic)
}

// namePair remembers the last two distinct copies of a name found equal
// (a client's shown topic and the produced one, which the trace keeps in
// strings of their own), so that the next test of the same two copies
// takes neither a call nor a byte compare.
type namePair struct{ a, b string }

// equal is a == b, remembering a and b when they are equal.
func (p *namePair) equal(a, b string) bool {
	if len(a) == len(p.a) && unsafe.StringData(a) == unsafe.StringData(p.a) &&
		len(b) == len(p.b) && unsafe.StringData(b) == unsafe.StringData(p.b) {
		return true // a is p.a, b is p.b, and p.a == p.b
	}
	if sameName(a, b) {
		p.a, p.b = a, b
		return true
	}
	return false
}
