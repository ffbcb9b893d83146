#!/usr/bin/env bash
# Regenerate the committed reports under results/ (make results), or, with
# --check, prove that runs are reproducible on this machine: regenerate the
# default scenario's seed-1 run into a temporary folder and require its
# summary and percentile files to be byte-identical to the committed ones
# (wall_seconds, the one wall-clock field, excepted). results/COMMIT, which
# names the commit the results were generated from, is not compared.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
bin=$(mktemp -d)/popsim
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/popsim

strip_wall() { grep -v '"wall_seconds"' "$1"; }

if [ "${1:-}" = "--check" ]; then
  tmp=$(dirname "$bin")/default
  "$bin" run -scenario default -seed 1 -out "$tmp" >/dev/null
  for f in summary.json end_to_end.hgrm service_time.hgrm histograms.hlog; do
    if ! diff <(strip_wall "results/default/$f") <(strip_wall "$tmp/$f") >/dev/null; then
      echo "results: $f of default seed 1 differs from results/default/$f:" >&2
      diff <(strip_wall "results/default/$f") <(strip_wall "$tmp/$f") | head -20 >&2
      echo "Runs are not reproducible, or results/ is stale: run make results and review the diff." >&2
      exit 1
    fi
  done
  echo "results: default seed 1 reproduced byte for byte (trace $(grep -o '"trace_xxh3": "[0-9a-f]*"' "$tmp/summary.json"))"
  exit 0
fi

rm -rf results/default results/pull-vs-pop results/hot-topic-500x500 results/validation results/peers results/versions results/fifo-orders results/fifo-poison results/fifo-vs-concurrent results/kv-vs-checkpoint results/filtered-groups results/filtered-fanout
"$bin" run -scenario default -seed 1 -out results/default
"$bin" sweep -scenario pull-vs-pop -param kind=pull,pop-push,simple -seeds 1..3 -out results/pull-vs-pop
"$bin" sweep -scenario hot-topic-500x500 -param kind=pull,simple -seeds 1 -out results/hot-topic-500x500
"$bin" sweep -scenario kv-vs-checkpoint -param path=kv,checkpoint -seeds 1..5 -out results/kv-vs-checkpoint
"$bin" run -scenario mmc-validation -seed 1 -out results/validation/mmc-validation
"$bin" run -scenario mm1-validation -seed 1 -out results/validation/mm1-validation
# What each RocketMQ release's defects cost on one workload: its runs fail
# by design (exit 1, violations found); any other exit code is an error.
"$bin" run -scenario versions -seed 1 -out results/versions/fixed
rc=0; "$bin" sweep -scenario versions -param version=5.3.2,5.3.3,5.4.0,5.5.0 -seeds 1..3 -out results/versions/releases || rc=$?
[ "$rc" -le 1 ] || exit "$rc"
# The engines side by side (README, "RocketMQ POP, Kafka share groups and SQS").
engines=rocketmq,kafka-share,sqs-standard,sqs-fifo
"$bin" sweep -scenario peers-default -param engine=$engines -seeds 1..3 -out results/peers/default
"$bin" sweep -scenario peers-crash-ackloss -param engine=$engines -seeds 1..3 -out results/peers/crash-ackloss
for e in rocketmq kafka-share; do
  "$bin" run -scenario peers-poison -seed 1 -set engine.kind=$e -out results/peers/poison/$e
done
# SQS's default is no redrive policy: a poison message comes back every
# VisibilityTimeout for MessageRetentionPeriod (4 days); these runs give
# the queue a DLQ after 5 receives.
for e in sqs-standard sqs-fifo; do
  "$bin" run -scenario peers-poison -seed 1 -set engine.kind=$e -set engine.RedrivePolicy.maxReceiveCount=5 -out results/peers/poison/$e-redrive5
done
"$bin" run -scenario filtered-groups -seed 1 -out results/filtered-groups
"$bin" run -scenario filtered-fanout -seed 1 -out results/filtered-fanout
"$bin" run -scenario fifo-orders -seed 1 -out results/fifo-orders
"$bin" run -scenario fifo-poison -seed 1 -out results/fifo-poison
"$bin" sweep -scenario fifo-vs-concurrent -param 'groups[0].consumeMessageOrderly=false,true' -param rate=50/s,100/s,200/s,400/s -seeds 1..3 -out results/fifo-vs-concurrent
# The binary above is built from the work tree; go run and binaries built
# outside a checkout carry no commit, so results/ records it here.
{
  git rev-parse HEAD
  if [ -n "$(git status --porcelain --untracked-files=no -- . ':(exclude)results')" ]; then
    echo "with uncommitted changes outside results/ (git status --porcelain)"
  fi
} > results/COMMIT
echo "results: regenerated from $(head -1 results/COMMIT); review with git diff --stat results/"
