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
# The sanitized build compiles while build/'s tests run: the kernel tier, the longest of
# them, mostly waits on sandboxes and leaves most of the machine idle (docs/benchmarks.md
# "CI time"). Niced, so that the tests keep the CPU they need; in a session of its own, so
# that leaving early stops all of it; its output shown only if it fails.
mkdir -p build-sanitized
setsid nice -n 10 bash scripts/build-sanitized.sh >build-sanitized/build.log 2>&1 &
sanitized_build=$!
trap 'kill -- "-$sanitized_build" 2>/dev/null || true' EXIT
# Tests that run sandboxes hold the RESOURCE_LOCK host_sandbox_runs (tests/CMakeLists.txt),
# so they run one at a time; the pure ones run beside them.
ctest --test-dir build --output-on-failure --timeout 900 -j"$(nproc)" -E '^unit_'
if ! wait "$sanitized_build"; then
  cat build-sanitized/build.log
  exit 1
fi
ctest --test-dir build-sanitized --output-on-failure --timeout 900 -j"$(nproc)" \
  -L '^(unit|golden|fuzz)$'
