#!/usr/bin/env bash
# Quick start, command 2: install and build as needed, then run the whole test suite with
# ctest: the mutation, golden, kernel-level and install tiers in build/, then the unit,
# golden and fuzz tiers under ASan+UBSan in build-sanitized/. Non-zero on any failure.
# Each test program is compiled once: build/ gets every target but the unit tests and the
# fuzz driver, which only the sanitized build compiles (docs/verify.md "Sanitizers").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
ZPOLICY_BUILD_TARGETS=zpolicy_all_but_sanitized_tests bash scripts/build.sh
# The sanitized build compiles while build/'s tiers run: the kernel tier runs one sandbox
# at a time and mostly waits on them, so the build takes the CPU it leaves. At the lowest
# priority, so that the tests run as they would alone (docs/benchmarks.md "CI time").
sanitized_log=build/sanitized-build.log
# In a session of its own, so that a failure here stops the whole build, compilers included.
setsid nice -n 19 bash scripts/build-sanitized.sh >"$sanitized_log" 2>&1 &
sanitized_build=$!
trap 'kill -- "-$sanitized_build" 2>/dev/null || true' EXIT
# Tests that run sandboxes hold the RESOURCE_LOCK host_sandbox_runs (tests/CMakeLists.txt),
# so they run one at a time; the pure ones run beside them.
ctest --test-dir build --output-on-failure --timeout 900 -j"$(nproc)" -E '^unit$'
if ! wait "$sanitized_build"; then
  cat "$sanitized_log" >&2
  echo "scripts/test.sh: the sanitized build failed (log above)" >&2
  exit 1
fi
ctest --test-dir build-sanitized --output-on-failure --timeout 900 -j"$(nproc)" \
  -L '^(unit|golden|fuzz)$'
