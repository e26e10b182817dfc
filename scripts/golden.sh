#!/usr/bin/env bash
# Golden files: golden/NAME.yaml compiles (portable, no --workspace) to the artifacts
# committed in golden/NAME.TARGET/. `--check` compares byte for byte (ctest runs this);
# `--update` regenerates them. Usage: golden.sh --check|--update [ZPOLICY_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
action=${1:?usage: golden.sh --check|--update [zpolicy]}
zpolicy=${2:-build/zpolicy}
targets=(linux macos)

status=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for policy in golden/*.yaml; do
  name=$(basename "$policy" .yaml)
  for target in "${targets[@]}"; do
    out="$scratch/$name.$target"
    if ! "$zpolicy" compile "$policy" --target "$target" --out "$out"; then
      echo "golden: $policy does not compile for $target" >&2
      status=1
      continue
    fi
    want="golden/$name.$target"
    case "$action" in
      --update)
        rm -rf "$want"
        cp -r "$out" "$want"
        ;;
      --check)
        if ! diff -r "$want" "$out" >"$scratch/diff" 2>&1; then
          echo "golden: $want differs from what $policy compiles to:" >&2
          cat "$scratch/diff" >&2
          echo "(if the change is intended: bash scripts/golden.sh --update, then review the diff)" >&2
          status=1
        fi
        ;;
      *)
        echo "usage: golden.sh --check|--update [zpolicy]" >&2
        exit 2
        ;;
    esac
  done
done
[ "$status" = 0 ] && echo "golden: all artifacts match"
exit "$status"
