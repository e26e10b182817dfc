#!/usr/bin/env bash
# Quick start, command 2: install and build as needed, then run the whole test suite with
# ctest: the mutation, golden, kernel-level and install tiers in build/, then the unit,
# golden and fuzz tiers under ASan+UBSan in build-sanitized/. Non-zero on any failure.
# Each test program is compiled once: build/ gets every target but the unit tests and the
# fuzz driver, which only the sanitized build compiles (docs/verify.md "Sanitizers").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Both trees compile the library in unity batches: a fresh clone's cold compile is most of
# CI's CPU (docs/decisions.md "Tests and CI"). scripts/build-sanitized.sh does it too.
ZPOLICY_BUILD_TARGETS=zpolicy_all_but_sanitized_tests bash scripts/build.sh \
  -DZPOLICY_UNITY_BUILD=ON
# The sanitized build compiles while build/'s tests run: their kernel tier spends minutes
# waiting on sandboxes and uses about a sixth of a core (docs/benchmarks.md "CI time
# (session 19)"). At the lowest priority, so that the tests' processes get a core as soon
# as they wake. Its log follows the tests' output. An interrupt (^C) reaches it too:
# ninja stops on SIGINT even in a background job, where the shell ignores it.
mkdir -p build-sanitized
nice -n 19 bash scripts/build-sanitized.sh </dev/null >build-sanitized/build.log 2>&1 &
sanitized_build=$!
# Each kernel suite is an entry with zpolicy's host state of its own
# (tests/kernel/private_host_state.sh), so the suites run side by side and beside the pure
# tiers; the few tests on the host's own state take turns (tests/CMakeLists.txt).
tests_status=0
ctest --test-dir build --output-on-failure --timeout 900 -j"$(nproc)" -E '^unit_' ||
  tests_status=$?
build_status=0
wait "$sanitized_build" || build_status=$?
echo "scripts/build-sanitized.sh, run beside build/'s tests (exit status $build_status):"
cat build-sanitized/build.log
if ((tests_status != 0 || build_status != 0)); then exit 1; fi
ctest --test-dir build-sanitized --output-on-failure --timeout 900 -j"$(nproc)" \
  -L '^(unit|golden|fuzz)$'
