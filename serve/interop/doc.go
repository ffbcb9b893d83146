// Package interop proves popsim serve with a client nobody on this project
// wrote: the official RocketMQ 5 Go client, github.com/apache/rocketmq-clients/golang/v5
// at v5.1.2. It is a module of its own (serve/interop/go.mod) so that the
// client and what it drags in (zap, opencensus, validator, ~20 modules)
// stay out of popsim's main module; its only code is its test.
//
//	cd serve/interop && go test ./...
package interop
