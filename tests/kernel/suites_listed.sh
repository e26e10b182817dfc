#!/usr/bin/env bash
# Fails when the kernel test program holds a top-level suite that no ctest entry runs:
# tests/CMakeLists.txt finds the suites in the sources (a line opening
# BOOST_AUTO_TEST_SUITE(name)), and a suite opened another way would otherwise never run.
# Usage: suites_listed.sh PROGRAM SUITE...
set -euo pipefail
program=$1
shift
missing=$(comm -23 <("$program" --list_content 2>&1 | sed -n 's/^\([A-Za-z0-9_]\+\)\*\?$/\1/p' | sort -u) \
  <(printf '%s\n' "$@" | sort -u))
if [[ -n $missing ]]; then
  echo "suites of $program that no ctest entry runs (tests/CMakeLists.txt):" >&2
  echo "$missing" >&2
  exit 1
fi
echo "every one of the $# suites has its ctest entry"
