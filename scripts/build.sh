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
fi
cmake -S . -B "$build_dir" ${generator[@]+"${generator[@]}"} -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DZPOLICY_WERROR=ON ${launcher[@]+"${launcher[@]}"} "$@" >/dev/null
targets=()
for t in ${ZPOLICY_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j"$(nproc)" ${targets[@]+"${targets[@]}"}
