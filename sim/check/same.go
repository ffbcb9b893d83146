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
