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
# Tests that run sandboxes hold the RESOURCE_LOCK host_sandbox_runs (tests/CMakeLists.txt),
# so they run one at a time; the pure ones run beside them.
ctest --test-dir build --output-on-failure --timeout 900 -j"$(nproc)" -E '^unit_'
bash scripts/build-sanitized.sh
ctest --test-dir build-sanitized --output-on-failure --timeout 900 -j"$(nproc)" \
  -L '^(unit|golden|fuzz)$'
