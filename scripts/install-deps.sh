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
  # What the kernel tests' everyday developer jobs use inside the sandbox.
  python3-venv sqlite3 perl patch
  # The plan JSON's schema test (tests/plan_schema_test.py).
  python3-jsonschema
  # Real clients through the network proxy (tests/kernel/network_clients_test.cpp): git
  # clones through it, pip downloads through it, curl is in the other network tests.
  python3-pip curl
)
# Node may come from elsewhere (NodeSource bundles npm in its nodejs, which Debian's npm
# package would conflict with): ask for Debian's only when no npm is on PATH.
if ! command -v npm >/dev/null; then packages+=(nodejs npm); fi

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
