#!/usr/bin/env bash
# Builds the library, the zpolicy binary, the unit tests and the fuzz driver (tests/fuzz/)
# under AddressSanitizer and UndefinedBehaviorSanitizer into build-sanitized/, where
# scripts/test.sh runs the unit, golden and fuzz tiers (docs/verify.md "Sanitizers").
# Only those targets, at -O1 with line tables only: a cold build must fit in CI's budget
# beside the main build, and a report needs line numbers, not full debug info. For the
# same budget the library compiles in unity batches (docs/decisions.md "Tests and CI").
# Extra arguments go to the CMake configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
ZPOLICY_BUILD_DIR=${ZPOLICY_SANITIZED_BUILD_DIR:-build-sanitized} \
  ZPOLICY_BUILD_TARGETS="zpolicy_cli zpolicy_unit_tests zpolicy_fuzz" \
  bash scripts/build.sh -DZPOLICY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Sanitize \
  "-DCMAKE_CXX_FLAGS_SANITIZE=-O1 -g1" -DZPOLICY_UNITY_BUILD=ON "$@"
