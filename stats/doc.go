// Package stats is popsim's output analysis: confidence intervals for
// simulated metrics.
package stats
