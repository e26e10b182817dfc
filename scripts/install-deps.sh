#!/usr/bin/env bash
# Installs what zpolicy needs to build, test and run on Debian 12. Idempotent: asks apt
# only for packages that are missing.
set -euo pipefail

# The -dev packages (and g++, through libstdc++-12-dev and libgcc-12-dev) also carry the
# static archives the zpolicy binary links (CMakeLists.txt, ZPOLICY_STATIC_DEPS).
packages=(
  g++ cmake make ninja-build ccache pkg-config
  libyaml-cpp-dev libboost-program-options-dev libboost-test-dev libfmt-dev libseccomp-dev
  bubblewrap util-linux python3 git strace
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
