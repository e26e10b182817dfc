#!/usr/bin/env bash
# Quick start, command 2: install and build as needed, then run the whole test suite
# (unit, mutation, golden, kernel-level and install tests) with ctest, then the unit and
# golden tiers under ASan+UBSan. Non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 900
# The pure tiers again under AddressSanitizer and UndefinedBehaviorSanitizer: a use after
# free or an overflow in the compiler or the analyzer fails here even where its output
# happens to be right.
ZPOLICY_BUILD_DIR=build-asan ZPOLICY_BUILD_TARGETS="zpolicy_cli zpolicy_unit_tests" \
  bash scripts/build.sh -DZPOLICY_SANITIZE=ON
ctest --test-dir build-asan --output-on-failure --timeout 900 -L 'unit|golden'
