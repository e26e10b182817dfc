#!/usr/bin/env bash
# Configures and builds zpolicy into build/ (warnings are errors). Extra arguments go to
# the CMake configure step, e.g. -DZPOLICY_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${ZPOLICY_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZPOLICY_WERROR=ON "$@" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
