// Package popsim is a deterministic simulation and benchmarking harness for
// RocketMQ 5's POP consumption model. The root package holds no code: see
// README.md, and lint_test.go, which enforces the architecture guide.
package popsim
