#!/usr/bin/env bash
# Proves that the unity build (CMakeLists.txt, ZPOLICY_UNITY_BUILD) binds every name as the
# build file by file does: a file's private helper can become a better overload for a call
# in another file of the same batch and be chosen silently. Builds the library and the CLI
# both ways at -O0 with a section per function (no inlining, so every call is a relocation),
# then compares, function by function, the symbols each one references. Any difference is
# printed and the script fails. Takes about twice an -O0 build of the library; run it
# after changing which names a library or CLI file defines privately, or the unity batches.
# The kernel tests' batches are not compared here (unity_private_names reads their names).
# Usage: scripts/unity_check.sh [WORK_DIR] (default: a new mktemp -d directory).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
for mode in ON OFF; do
  cmake -S . -B "$work/unity-$mode" ${generator[@]+"${generator[@]}"} -DCMAKE_BUILD_TYPE=None \
    "-DCMAKE_CXX_FLAGS=-O0 -g0 -ffunction-sections -fdata-sections" \
    -DZPOLICY_UNITY_BUILD=$mode -DZPOLICY_BUILD_TESTS=OFF >/dev/null
  cmake --build "$work/unity-$mode" -j"$(nproc)" --target zpolicy zpolicy_cli
  # One line per (defining section, referenced symbol), for the sections of zpolicy's own
  # functions and data (and templates instantiated over its types): private ones
  # (_GLOBAL__N, _ZL), zpolicy's namespaces, unmangled names. Left out as layout, not
  # binding: string literals' local labels (.LC*, numbered per translation unit), unwind
  # and exception tables, which of a constructor's or destructor's variants (C1/C2, D0-D2)
  # GCC emits, and the static initializer's name, which is the translation unit's. The
  # union is taken over objects: a batch holds one copy of each inline function.
  find "$work/unity-$mode" -name '*.o' -print0 | sort -z |
    xargs -0 readelf -rW 2>/dev/null |
    awk '/^Relocation section/ { sec = $3; gsub(/^.\.rela|.$/, "", sec); next }
         NF >= 5 && $1 != "Offset" && $5 !~ /^\.L/ &&
         $5 !~ /^\.(text|rodata|data|bss|gcc_except_table)(\.(str|cst)[0-9.]*)?$/ &&
         sec !~ /eh_frame|gcc_except_table/ &&
         sec ~ /zpolicy|_GLOBAL__N|^\.text\._ZL|^\.(text|data|rodata)\.[a-zA-Z]/ { print sec, $5 }' |
    sed -E 's/([CD])[012]([EI])/\1x\2/g; s/_GLOBAL__sub_I_[A-Za-z0-9_.]+/_GLOBAL__sub_I_TU/g' |
    sort -u >"$work/references-$mode.txt"
done
if ! diff "$work/references-OFF.txt" "$work/references-ON.txt"; then
  echo "unity_check: the unity build binds these references differently (< file by file, > unity)" >&2
  exit 1
fi
echo "unity_check: $(wc -l <"$work/references-ON.txt") references, the same in both builds"
