# popsim developer targets. `make` alone lists them.
GO ?= go
BASE ?= HEAD~1
FUZZTIME ?= 30s
RAPID_CHECKS ?= 20000
RAPID_SEEDS ?=
SWARM_SEEDS ?= 150
SWARM_SCENARIOS ?=
CATCH_SEEDS ?= 20
SOAK ?= 1h

.DEFAULT_GOAL := help
.PHONY: help build test interop check ci bench bench-smoke bench-compare trace-compare bench-hour prop swarm catch fuzz results validate run

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

build: ## build popsim and popbench into ./
	$(GO) build -o popsim ./cmd/popsim
	$(GO) build -o popbench ./cmd/popbench

run: ## run the default scenario (same as `go run ./cmd/popsim`)
	$(GO) run ./cmd/popsim

test: ## the README's test command: go test ./...
	$(GO) test ./...

interop: ## popsim serve against the official RocketMQ Go client (the serve/interop module, ~11 s)
	cd serve/interop && $(GO) test ./...

check: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

ci: ## what CI runs (.ci/run)
	bash .ci/run

bench: ## engine hot-path benchmarks with floors, written to results/bench/
	$(GO) run ./cmd/popbench run -out results/bench

bench-smoke: ## the CI benchmark gate (allocations and simulated-time metrics)
	$(GO) run ./cmd/popbench smoke

bench-compare: ## compare BASE (a git ref) with the working tree: make bench-compare BASE=main
	bash scripts/bench-compare.sh $(BASE)

trace-compare: ## every built-in scenario's trace on both POP paths, BASE (a git ref) against the working tree: make trace-compare BASE=main
	bash scripts/trace-compare.sh $(BASE)

bench-hour: ## hot-topic-500x500 at 10 000 msg/s for SOAK=1h of virtual time: speed and peak memory to results/bench/
	$(GO) run ./cmd/popbench soak -scenario hot-topic-500x500 -rate 10000/s -duration $(SOAK) -out results/bench

prop: ## long property runs (RAPID_CHECKS=20000; RAPID_SEEDS="1 2 3": one run per rapid seed)
	@if [ -z "$(RAPID_SEEDS)" ]; then \
		echo "RAPID_CHECKS=$(RAPID_CHECKS) $(GO) test -count=1 -run 'Prop|Rapid|StateMachine|AtLeastOnce' -timeout 2h ./..."; \
		RAPID_CHECKS=$(RAPID_CHECKS) $(GO) test -count=1 -run 'Prop|Rapid|StateMachine|AtLeastOnce' -timeout 2h ./...; \
	else fail=""; for s in $(RAPID_SEEDS); do \
		echo "== rapid seed $$s: RAPID_SEED=$$s RAPID_CHECKS=$(RAPID_CHECKS) $(GO) test -count=1 -run 'Prop|Rapid|StateMachine|AtLeastOnce' ./..."; \
		RAPID_SEED=$$s RAPID_CHECKS=$(RAPID_CHECKS) $(GO) test -count=1 -run 'Prop|Rapid|StateMachine|AtLeastOnce' -timeout 2h ./... || fail="$$fail $$s"; \
	done; if [ -n "$$fail" ]; then echo "prop: failed for rapid seed(s)$$fail"; exit 1; fi; echo "prop: every seed passed"; fi

swarm: ## every built-in scenario in swarm mode over seeds 1..SWARM_SEEDS (150), all cores; table of failing seeds
	POPSIM_SWARM=$(SWARM_SEEDS) POPSIM_SWARM_SCENARIOS=$(SWARM_SCENARIOS) $(GO) test ./scenarios -run '^TestSwarmBuiltins$$' -count=1 -v -timeout 12h

catch: ## each upstream-bug switch's recipe over seeds 1..CATCH_SEEDS (20): catch rate and invariants
	POPSIM_CATCH=$(CATCH_SEEDS) $(GO) test ./scenarios -run '^TestCatchRates$$' -count=1 -v -timeout 4h

fuzz: ## fuzz each target for FUZZTIME (default 30s)
	@for p in ./model ./workload ./scenarios ./pop ./filter; do \
		for t in $$($(GO) test -list '^Fuzz' $$p | grep '^Fuzz'); do \
			echo "== $$p $$t"; $(GO) test $$p -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) || exit 1; done; done

results: ## regenerate the committed reports under results/
	bash scripts/results.sh

validate: ## full-size queueing-theory validation (M/M/c, M/M/1) and interval coverage
	$(GO) test ./scenarios -run 'Validation|Coverage' -validation.full -timeout 2h -v
