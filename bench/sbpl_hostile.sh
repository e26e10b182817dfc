#!/usr/bin/env bash
# Issue 19's budget for the macOS verifier: any artifact under 1 MiB is answered in under
# 2 s and 512 MiB. Runs `zpolicy verify golden/default.yaml` on each hostile profile of
# bench/sbpl_hostile.py and prints its exit status, wall time, CPU time (user + system) and
# peak RSS (/usr/bin/time -v); on a shared machine the CPU time is the steadier figure. Exit 3 (findings, or refused with a location) is the expected
# answer for every case; a signal or exit 125 is a failure.
#   bench/sbpl_hostile.sh [ZPOLICY]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
zp=$(realpath "${1:-build/zpolicy}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/sbpl_hostile.py" "$root/golden/default.macos" "$tmp" >/dev/null
echo "| case | profile KiB | params KiB | exit | wall s | CPU s | max RSS MiB |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for d in "$tmp"/*/; do
  name=$(basename "$d")
  set +e
  /usr/bin/time -v -o "$tmp/time" "$zp" verify "$root/golden/default.yaml" "$d" --target macos \
    >/dev/null 2>"$tmp/err"
  status=$?
  set -e
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0;
    for (i = 1; i <= n; i++) s = s * 60 + t[i]; printf "%.2f", s}' "$tmp/time")
  cpu=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {printf "%.2f", u + s}' \
    "$tmp/time")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$tmp/time")
  kib() { echo $(( $(stat -c %s "$1") / 1024 )); }
  echo "| $name | $(kib "$d/profile.sb") | $(kib "$d/params.txt") | $status | $wall | $cpu | $rss |"
done
