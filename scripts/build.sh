#!/usr/bin/env bash
# Configures and builds zpolicy into build/ (warnings are errors). Extra arguments go to
# the CMake configure step, e.g. -DZPOLICY_SANITIZE=ON. ZPOLICY_BUILD_DIR picks another
# directory; ZPOLICY_BUILD_TARGETS limits the build to those targets. Ninja and ccache are
# used when installed (scripts/install-deps.sh installs both): they only make rebuilds faster.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${ZPOLICY_BUILD_DIR:-build}
generator=()
if [[ ! -e "$build_dir/CMakeCache.txt" ]] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Depend mode takes the headers from the compiler's -MD output instead of running the
  # preprocessor a second time on every cache miss, which is every compile of a fresh clone.
  export CCACHE_DEPEND=${CCACHE_DEPEND:-true}
fi
# Line tables only (-g1): backtraces and profiles keep file:line, and a cold build costs
# about a third less CPU than with full debug info (docs/benchmarks.md "CI time").
cmake -S . -B "$build_dir" ${generator[@]+"${generator[@]}"} -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  -DZPOLICY_WERROR=ON ${launcher[@]+"${launcher[@]}"} "$@" >/dev/null
targets=()
for t in ${ZPOLICY_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j"$(nproc)" ${targets[@]+"${targets[@]}"}
