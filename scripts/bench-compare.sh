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
top=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$top" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

git -C "$top" rev-parse --verify --quiet "$base^{commit}" >/dev/null || { echo "bench-compare: unknown git ref $base" >&2; exit 2; }
git -C "$top" worktree add --detach "$work/base" "$base" >/dev/null
(cd "$work/base" && go build -o "$work/popbench-base" ./cmd/popbench)
(cd "$top" && go build -o "$work/popbench-head" ./cmd/popbench)

for i in $(seq 1 "$rounds"); do
  echo "== round $i/$rounds: base ($base)"
  "$work/popbench-base" run -count 2 -out "$work/base-$i" "$@" >/dev/null
  echo "== round $i/$rounds: head (working tree)"
  "$work/popbench-head" run -count 2 -out "$work/head-$i" "$@" >/dev/null
done
cat "$work"/base-*/bench.txt > "$work/base.txt"
cat "$work"/head-*/bench.txt > "$work/head.txt"
"$work/popbench-head" compare -threshold ns/msg=10% -threshold allocs/msg=0 "$work/base.txt" "$work/head.txt"
