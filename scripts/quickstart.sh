#!/usr/bin/env bash
# Quick start, command 1: install, build, then do zpolicy's main job on the built-in
# default policy: compile it for Linux and run a command under it in a scratch workspace,
# showing a write inside the workspace succeed and one outside it refused by the kernel.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
zpolicy=$PWD/build/zpolicy

echo
echo "== the built-in default policy, compiled for linux (bwrap argv) =="
"$zpolicy" show-default | "$zpolicy" compile /dev/stdin --target linux --emit bwrap.args

workspace=$(mktemp -d /tmp/zpolicy-quickstart.XXXXXX)
trap 'rm -rf "$workspace"' EXIT
echo
echo "== zpolicy run in $workspace =="
cd "$workspace"
"$zpolicy" run -- sh -c '
  echo hello > inside.txt && echo "write inside the workspace: ok"
  if echo x > "$HOME/zpolicy-quickstart-escape" 2>/dev/null; then
    echo "write outside the workspace: ALLOWED (this is a bug)"; exit 1
  else
    echo "write outside the workspace: refused"
  fi
  if mkdir .git/hooks-x 2>/dev/null || echo x > .env 2>/dev/null; then
    echo "write to a protected path: ALLOWED (this is a bug)"; exit 1
  else
    echo "write to a protected path (.git, .env): refused"
  fi'
echo "on the host: inside.txt contains '$(cat inside.txt)'"
test ! -e "$HOME/zpolicy-quickstart-escape"
test ! -e .env
echo "quickstart: ok"
