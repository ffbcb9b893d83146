#!/usr/bin/env bash
# Check that a change keeps every trace: build popsim at a base git ref and
# from the working tree, run every built-in scenario (or the ones named) on
# both of RocketMQ's POP paths with both binaries, and compare the trace
# files and exit codes. An optimisation must print no DIFF.
#
#   scripts/trace-compare.sh BASE [SCENARIO...]
#   make trace-compare BASE=main
#
# Each run is seed 2 for 20 virtual seconds (pull-to-pop 40: its switch to
# POP is at 30 s). Exit 0: every trace the same; 1: some differ; 2: bad input.
set -euo pipefail
base=${1:?usage: trace-compare.sh BASE [SCENARIO...]}
shift
. "$(dirname "$0")/base-and-head.sh"
build_base_and_head trace-compare "$base" popsim

scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || mapfile -t scenarios < <("$work/popsim-head" list | awk '/^[a-z0-9-]+ /{print $1}')
fail=0
for s in "${scenarios[@]}"; do
  dur=20s; [ "$s" = pull-to-pop ] && dur=40s
  for kv in false true; do
    path=checkpoint; [ "$kv" = true ] && path=kv
    for v in base head; do
      rc=0
      "$work/popsim-$v" run -scenario "$s" -seed 2 -set duration=$dur -set engine.popConsumerKVServiceEnable=$kv \
        -out "$work/run-$v" -overwrite -trace "$work/$v.trace" >/dev/null 2>"$work/$v.err" || rc=$?
      echo "$rc" >"$work/$v.rc"
      [ "$rc" -le 1 ] || { echo "trace-compare: $v binary: popsim run -scenario $s exited $rc: $(head -c 300 "$work/$v.err")" >&2; exit 2; }
    done
    if cmp -s "$work/base.trace" "$work/head.trace" && cmp -s "$work/base.rc" "$work/head.rc"; then
      echo "same $s path=$path $(sha256sum <"$work/head.trace" | cut -c1-16)"
    else
      echo "DIFF $s path=$path"; fail=1
    fi
    rm -rf "$work"/run-* "$work"/*.trace
  done
done
exit $fail
