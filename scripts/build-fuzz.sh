#!/usr/bin/env bash
# Builds the fuzz driver (tests/fuzz/) and the library it drives under AddressSanitizer
# and UndefinedBehaviorSanitizer into build-fuzz/ (docs/verify.md "Fuzzing"). Only those
# targets, at -O1 with line tables only: a cold build must fit in CI's budget beside the
# main build, and the smoke run needs line numbers in a report, not full debug info.
# Extra arguments go to the CMake configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
ZPOLICY_BUILD_DIR=${ZPOLICY_FUZZ_BUILD_DIR:-build-fuzz} ZPOLICY_BUILD_TARGETS=zpolicy_fuzz \
  bash scripts/build.sh -DZPOLICY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Fuzz \
  "-DCMAKE_CXX_FLAGS_FUZZ=-O1 -g1" "$@"
