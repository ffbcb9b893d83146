#!/usr/bin/env bash
# Prove that a change leaves runs without a broker cost model alone: run
# every built-in (seed 1, 10 s of virtual time) with the popsim of BASE
# (default: main) and of the work tree, and require their summaries (but
# wall_seconds) and end-to-end percentile files to be byte-identical.
#
#   scripts/broker-off-check.sh [BASE]
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
base=${1:-main}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive "$base" | tar -x -C "$tmp" --one-top-level=src
(cd "$tmp/src" && go build -o "$tmp/popsim-base" ./cmd/popsim)
go build -o "$tmp/popsim-new" ./cmd/popsim
same=0 differ=0
for s in $("$tmp/popsim-base" list | awk '{print $1}'); do
  args=(run -scenario "$s" -seed 1 -set duration=10s)
  "$tmp/popsim-base" "${args[@]}" -out "$tmp/a" >/dev/null 2>&1 || true
  "$tmp/popsim-new" "${args[@]}" -out "$tmp/b" >/dev/null 2>&1 || true
  if diff <(grep -v wall_seconds "$tmp/a/summary.json") <(grep -v wall_seconds "$tmp/b/summary.json") >/dev/null &&
    cmp -s "$tmp/a/end_to_end.hgrm" "$tmp/b/end_to_end.hgrm"; then
    echo "$s: identical"
    same=$((same + 1))
  else
    echo "$s: DIFFERS" >&2
    differ=$((differ + 1))
  fi
  rm -rf "$tmp/a" "$tmp/b"
done
echo "broker-off-check: $same built-ins identical to $base, $differ differ"
[ "$differ" = 0 ]
