#!/usr/bin/env bash
# Issue 18's scaling budget: a policy with N protected subpaths and N/10 deny roots
# (bench/scale_policy.py) compiles for both targets, with verification, in under 2 s at
# N = 20 000, and 10x the input costs at most 15x the time. Prints, for each N, the CPU
# time (user + system, the median of RUNS runs) of `zpolicy compile --out` per target
# and for both.
#   bench/scale.sh [ZPOLICY] [RUNS] [N...]
set -euo pipefail
zp=$(realpath "${1:-build/zpolicy}")
runs=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(2000 20000)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cpu() {  # cpu TARGET POLICY: CPU seconds of one compile
  /usr/bin/time -f "%U %S" -o "$tmp/t" "$zp" compile "$2" --target "$1" --out "$tmp/out" >/dev/null
  awk '{printf "%.3f\n", $1 + $2}' "$tmp/t"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
echo "| protected | deny roots | linux s | macos s | both s |"
echo "|---:|---:|---:|---:|---:|"
for n in "${sizes[@]}"; do
  python3 "$here/scale_policy.py" "$n" "$tmp/p.yaml"
  l=$(for _ in $(seq "$runs"); do cpu linux "$tmp/p.yaml"; done | median)
  m=$(for _ in $(seq "$runs"); do cpu macos "$tmp/p.yaml"; done | median)
  echo "| $n | $((n / 10)) | $l | $m | $(awk -v a="$l" -v b="$m" 'BEGIN {printf "%.3f", a + b}') |"
done
