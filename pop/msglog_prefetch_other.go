//go:build !amd64

package pop

import "popsim/model"

// prefetchAppend does nothing where no assembly asks the CPU to prefetch
// (msglog_prefetch_amd64.go).
func prefetchAppend(*model.Message, *queue) {}
