# Sourced by bench-compare.sh and trace-compare.sh: build one command of
# this module at a base git ref (in a temporary worktree) and from the
# working tree, side by side.
#
#   build_base_and_head NAME BASE CMD
#
# sets top (the repository) and work (a temporary folder, removed on exit)
# and leaves $work/CMD-base and $work/CMD-head built from ./cmd/CMD; NAME
# prefixes the error for an unknown BASE (exit 2).
build_base_and_head() {
  local name=$1 base=$2 cmd=$3
  top=$(git rev-parse --show-toplevel)
  work=$(mktemp -d)
  trap 'git -C "$top" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  git -C "$top" rev-parse --verify --quiet "$base^{commit}" >/dev/null || { echo "$name: unknown git ref $base" >&2; exit 2; }
  git -C "$top" worktree add --detach "$work/base" "$base" >/dev/null
  (cd "$work/base" && go build -o "$work/$cmd-base" "./cmd/$cmd")
  (cd "$top" && go build -o "$work/$cmd-head" "./cmd/$cmd")
}
