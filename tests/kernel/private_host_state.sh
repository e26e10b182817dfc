#!/usr/bin/env bash
# Runs a command (a kernel test suite) with zpolicy's host-wide state of its own: the run
# lock (/dev/zpolicy), root's run records (/run/zpolicy) and an unprivileged caller's
# (/tmp/zpolicy-UID, under /tmp), each a fresh tmpfs in a private mount namespace.
#
# Runs on one host coordinate through that state, and a run removes its placeholders only
# when it is alone on the host at its end (docs/decisions.md "the host run lock"); a test
# that asserts on what a run left behind therefore fails when another test's sandbox is
# live. With state of its own each suite is alone, as on a host of its own: ctest runs the
# suites side by side, and the developer's own runs neither disturb them nor are
# disturbed. Workspaces stay on the host (/var/tmp), where the tests check from outside.
# Must run as root, as the kernel tests do.
#
# Usage: private_host_state.sh [--keep DIR]... -- COMMAND [ARG...]
# A DIR under /tmp (a `mktemp -d` checkout, its build tree) stays in the private /tmp as it
# is: its top directory below /tmp is bound there, mode and owner its own.
set -euo pipefail
keep=()
while (($# > 0)) && [[ $1 != -- ]]; do
  [[ $1 == --keep && $# -ge 2 ]] || {
    echo "usage: $0 [--keep DIR]... -- COMMAND [ARG...]" >&2
    exit 2
  }
  keep+=("$2")
  shift 2
done
if (($# < 2)); then
  echo "usage: $0 [--keep DIR]... -- COMMAND [ARG...]" >&2
  exit 2
fi
shift
# The mount points exist on the host as root's first run makes them (runner/host_run_lock.cpp,
# runner/placeholders.cpp), so making them here changes nothing a run would not.
[[ -d /dev/zpolicy ]] || install -d -m 0755 /dev/zpolicy
[[ -d /run/zpolicy ]] || install -d -m 0700 /run/zpolicy
tops=()
for dir in "${keep[@]}"; do
  dir=$(realpath -- "$dir")
  [[ $dir == /tmp/?* ]] || continue
  rest=${dir#/tmp/}
  top=${rest%%/*}
  [[ " ${tops[*]-} " == *" $top "* ]] || tops+=("$top")
done
# The new /tmp is made at /run/zpolicy first, the kept tops bound into it, and then moved
# over /tmp: the tops are bound from the host's /tmp before it is covered.
exec unshare --mount --propagation private -- bash -c '
  set -e
  mount -t tmpfs -o mode=0755 zpolicy-test-lock /dev/zpolicy
  mount -t tmpfs -o mode=1777 zpolicy-test-tmp /run/zpolicy
  n=$1
  shift
  for ((i = 0; i < n; i++)); do
    mkdir -p "/run/zpolicy/$1"
    mount --bind "/tmp/$1" "/run/zpolicy/$1"
    shift
  done
  mount --move /run/zpolicy /tmp
  mount -t tmpfs -o mode=0700 zpolicy-test-state /run/zpolicy
  exec "$@"' private_host_state "${#tops[@]}" ${tops[@]+"${tops[@]}"} "$@"
