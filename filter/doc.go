// Package filter is RocketMQ's subscription-expression language: TAG
// expressions ("*", "tagA || tagB") and SQL92 conditions over message
// properties ("region = 'eu' AND price BETWEEN 10 AND 20"), compiled and
// evaluated exactly as a RocketMQ 5 broker, proxy and client do, including
// upstream's null, type-conversion and hash-code rules.
//
// It owns: parsing (FilterAPI.build, SelectorParser), the canonical text
// form, the broker's two-stage check (the consume queue's tag hash code,
// then the stored message's properties), the proxy's and clients' exact
// tag check, and the retry-topic rule of ExpressionForRetryMessageFilter.
// It does not own which messages a read scans (the engine's 800-entry
// filtered-read limit), long polling, or what the proxy does with a
// rejected message; those callers use it.
//
// It is deterministic and pure: no clock, no I/O, no goroutines, no
// global state; it imports only popsim/model and the standard library.
// Bad input is an *Error naming the place and what was expected, never a
// panic.
//
// Usage:
//
//	f, err := filter.Parse("SQL92", "region = 'eu' AND price > 10")
//	if err != nil { ... }            // broker: SUBSCRIPTION_PARSE_FAILED (23)
//	f.Match(msg)                     // what the subscriber finally gets
//	f.MatchConsumeQueue(filter.TagsCode(msg.Tags)) && f.MatchCommitLog(msg)
//	                                 // what the broker's store read returns
//	f.MatchTags(msg.Tags)            // the proxy's re-check of a popped message
//	f.String()                       // canonical: region = 'eu' AND price > 10
//
// A nil *Filter, "" and "*" subscribe to everything. Known upstream
// defects are off by default and come back with Parser{Bugs: ...}. The
// language, the type rules and what popsim does not model are described
// in docs/filters.md.
package filter
