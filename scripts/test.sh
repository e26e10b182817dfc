#!/usr/bin/env bash
# Quick start, command 2: install and build as needed, then run the whole test suite
# (unit, mutation, golden, kernel-level and install tests) with ctest, then the fuzz
# smoke under ASan+UBSan. Non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 900
# Every input kind through a fixed-seed minute of mutations, with only the fuzz driver
# and the library built under the sanitizers (docs/verify.md "Fuzzing").
bash scripts/build-fuzz.sh
ctest --test-dir build-fuzz --output-on-failure -L fuzz
