//go:build !invariants

package check

// checkRecycled is a no-op without the invariants build tag.
func checkRecycled(*Checker, *msgState) {}
