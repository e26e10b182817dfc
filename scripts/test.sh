#!/usr/bin/env bash
# Quick start, command 2: install and build as needed, then run the whole test suite
# (unit, mutation, golden, kernel-level and install tests) with ctest. Non-zero on any
# failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 900
