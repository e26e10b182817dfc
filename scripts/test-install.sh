#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds and runs the example consumers
# (examples/) against the installed tree only: C through pkg-config, C++ through
# find_package, Python through ctypes; then the Debian package. Usage: test-install.sh BUILD_DIR
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$(cd "$1" && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name libzpolicy.so -print -quit)")
export PKG_CONFIG_PATH="$libdir/pkgconfig" LD_LIBRARY_PATH="$libdir"

"$prefix/bin/zpolicy" --version
# shellcheck disable=SC2046 # pkg-config prints several words on purpose
cc -std=c11 -Wall -Werror "$source_dir/examples/c/compile_default.c" -o "$prefix/c-example" \
  $(pkg-config --cflags --libs zpolicy)
"$prefix/c-example"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror "$source_dir/examples/c/run_command.c" -o "$prefix/run-command" \
  $(pkg-config --cflags --libs zpolicy)
mkdir "$prefix/run-ws"
(cd "$prefix/run-ws" && "$prefix/run-command" -- true)
status=0
(cd "$prefix/run-ws" && "$prefix/run-command" -- false) || status=$?
[[ $status == 1 ]]

cmake -S "$source_dir/examples/cpp" -B "$prefix/cpp-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/cpp-build" >/dev/null
"$prefix/cpp-build/check_policy" "$source_dir/golden/default.yaml"

python3 "$source_dir/examples/python/compile_and_verify.py" "$libdir/libzpolicy.so" \
  "$source_dir/golden/default.yaml"
mkdir "$prefix/plan-ws"
(cd "$prefix/plan-ws" && python3 "$source_dir/examples/python/plan_with_ctypes.py" \
  "$libdir/libzpolicy.so" "$source_dir/golden/default.yaml" "$prefix/plan-ws")
[[ -f "$prefix/share/zpolicy/plan.schema.json" ]]
# The Debian package: built by CPack, unpacked (not installed: the test leaves the host
# as it was), and its binary runs a sandbox.
(cd "$build_dir" && cpack -G DEB -B "$prefix/deb" >/dev/null)
deb=$(find "$prefix/deb" -maxdepth 1 -name 'zpolicy_*.deb' -print -quit)
[[ $(dpkg-deb -f "$deb" Depends) == *bubblewrap* ]]
dpkg-deb -x "$deb" "$prefix/deb-root"
mkdir "$prefix/ws"
(cd "$prefix/ws" && "$prefix/deb-root/usr/bin/zpolicy" run -- true)

echo "test-install: the installed library, headers, CMake package and pkg-config file work"
