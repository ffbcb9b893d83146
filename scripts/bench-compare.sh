#!/usr/bin/env bash
# Compare the hot-path benchmarks of a base git ref with the working tree:
# both popbench binaries are built side by side and their runs interleaved
# (base, head, base, head, ...) so machine noise hits both alike; then
# `popbench compare` judges the difference with a Mann-Whitney test.
#
#   scripts/bench-compare.sh BASE [ROUNDS] [extra popbench run flags...]
#   make bench-compare BASE=main
set -euo pipefail
base=${1:?usage: bench-compare.sh BASE [ROUNDS] [popbench run flags]}
rounds=${2:-5}
shift $(( $# >= 2 ? 2 : 1 ))
. "$(dirname "$0")/base-and-head.sh"
build_base_and_head bench-compare "$base" popbench

for i in $(seq 1 "$rounds"); do
  echo "== round $i/$rounds: base ($base)"
  "$work/popbench-base" run -count 2 -out "$work/base-$i" "$@" >/dev/null
  echo "== round $i/$rounds: head (working tree)"
  "$work/popbench-head" run -count 2 -out "$work/head-$i" "$@" >/dev/null
done
cat "$work"/base-*/bench.txt > "$work/base.txt"
cat "$work"/head-*/bench.txt > "$work/head.txt"
"$work/popbench-head" compare -threshold ns/msg=10% -threshold allocs/msg=0 "$work/base.txt" "$work/head.txt"
