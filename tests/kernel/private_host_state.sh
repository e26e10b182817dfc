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
set -euo pipefail
if (($# == 0)); then
  echo "usage: $0 COMMAND [ARG...]" >&2
  exit 2
fi
# The mount points exist on the host as root's first run makes them (runner/host_run_lock.cpp,
# runner/placeholders.cpp), so making them here changes nothing a run would not.
[[ -d /dev/zpolicy ]] || install -d -m 0755 /dev/zpolicy
[[ -d /run/zpolicy ]] || install -d -m 0700 /run/zpolicy
exec unshare --mount --propagation private -- bash -c '
  set -e
  mount -t tmpfs -o mode=0755 zpolicy-test-lock /dev/zpolicy
  mount -t tmpfs -o mode=0700 zpolicy-test-state /run/zpolicy
  mount -t tmpfs -o mode=1777 zpolicy-test-tmp /tmp
  exec "$@"' private_host_state "$@"
