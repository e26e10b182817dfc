#!/usr/bin/env bash
# The CHECK arguments below are single-quoted on purpose: eval expands them after the run.
# shellcheck disable=SC2016
# Escape checks for the macOS target, run on a Mac against the real Seatbelt.
#
#   scripts/macos-escape-check.sh [PATH-TO-ZPOLICY]
#
# zpolicy's own CI verifies the macOS profile statically on Linux (docs/macos.md). This
# script is the check a macOS user runs: it compiles the built-in default policy for a
# scratch workspace, runs each escape attempt under /usr/bin/sandbox-exec with that
# profile, and inspects the result from outside the sandbox. Exit 0 when every check
# passes, 1 otherwise.
set -uo pipefail

zpolicy=${1:-zpolicy}
if [[ $(uname -s) != Darwin ]]; then
  echo "macos-escape-check: this runs on macOS only (Seatbelt is not on $(uname -s))" >&2
  exit 2
fi
if [[ ! -x /usr/bin/sandbox-exec ]]; then
  echo "macos-escape-check: /usr/bin/sandbox-exec is missing" >&2
  exit 2
fi

scratch=$(mktemp -d)
trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
ws="$scratch/ws"
mkdir -p "$ws/.git" "$ws/data/agent-sessions"
echo original > "$ws/.git/config"
echo original > "$ws/data/agent-sessions/log"

"$zpolicy" show-default > "$scratch/policy.yaml" || exit 2
"$zpolicy" compile "$scratch/policy.yaml" --target macos --workspace "$ws" --out "$scratch/out" ||
  exit 2
profile=$(cat "$scratch/out/profile.sb")
defines=()
while IFS= read -r line; do defines+=(-D "$line"); done < "$scratch/out/params.txt"

failures=0
# Runs a shell snippet in the workspace under the compiled profile.
sandboxed() { (cd "$ws" && /usr/bin/sandbox-exec -p "$profile" ${defines[@]+"${defines[@]}"} -- /bin/sh -c "$1") >/dev/null 2>&1; }
report() {  # report PASS|FAIL NAME
  echo "$1  $2"
  [[ $1 == PASS ]] || failures=$((failures + 1))
}
# refused NAME SNIPPET CHECK: the snippet must fail and CHECK (run outside) must hold.
refused() {
  if ! sandboxed "$2" && eval "$3"; then report PASS "$1"; else report FAIL "$1"; fi
}
allowed() {
  if sandboxed "$2" && eval "$3"; then report PASS "$1"; else report FAIL "$1"; fi
}

allowed "write inside the workspace" 'echo ok > file' '[[ $(cat "$ws/file") == ok ]]'
allowed "create .github (shares a prefix with .git)" 'mkdir .github' '[[ -d "$ws/.github" ]]'
allowed "read outside the workspace" 'cat /etc/hosts' 'true'
refused "write outside the workspace" "echo x > '$scratch/outside'" '[[ ! -e "$scratch/outside" ]]'
refused "write into .git" 'echo evil >> .git/config' '[[ $(cat "$ws/.git/config") == original ]]'
refused "write into .git spelled .GIT" 'echo evil >> .GIT/config' \
  '[[ $(cat "$ws/.git/config") == original ]]'
refused "create a missing .env" 'echo SECRET=1 > .env' '[[ ! -e "$ws/.env" ]]'
refused "rename .git away" 'mv .git git-moved' '[[ -d "$ws/.git" && ! -e "$ws/git-moved" ]]'
refused "rename the parent of a protected path" 'mv data data-moved' \
  '[[ -d "$ws/data/agent-sessions" && ! -e "$ws/data-moved" ]]'
refused "hard link to a protected file" 'ln .git/config cfg' '[[ ! -e "$ws/cfg" ]]'
refused "write through a symlink into .git" 'ln -s .git/config cfg-link && echo evil >> cfg-link' \
  '[[ $(cat "$ws/.git/config") == original ]]'
# A listener on the host's loopback makes the network check independent of connectivity.
/usr/bin/nc -l 127.0.0.1 47831 >/dev/null 2>&1 &
listener=$!
sleep 1
refused "network (TCP to a host listener on 127.0.0.1)" '/usr/bin/nc -z -G 3 127.0.0.1 47831' 'true'
kill "$listener" 2>/dev/null
refused "network (TCP to 1.1.1.1:443)" '/usr/bin/nc -z -G 3 1.1.1.1 443' 'true'
refused "host unix socket (mDNSResponder)" '/usr/bin/nc -z -U /var/run/mDNSResponder' 'true'
refused "signal a host process" "kill -0 $$" 'true'

# `zpolicy run` itself: the same profile through the runner, its preflight, and the
# command's own status passed through (65 and 71 are also sandbox-exec's refusal codes).
zrun() { (cd "$ws" && "$zpolicy" run --policy "$scratch/policy.yaml" --workspace "$ws" -- /bin/sh -c "$1") >/dev/null 2>&1; }
if ! zrun 'echo evil >> .git/config' && [[ $(cat "$ws/.git/config") == original ]]; then
  report PASS "zpolicy run: write into .git"
else
  report FAIL "zpolicy run: write into .git"
fi
if zrun 'echo ok > run-file' && [[ $(cat "$ws/run-file") == ok ]]; then
  report PASS "zpolicy run: write inside the workspace"
else
  report FAIL "zpolicy run: write inside the workspace"
fi
for code in 65 71; do
  zrun "exit $code"
  status=$?
  if [[ $status -eq $code ]]; then report PASS "zpolicy run: the command's own exit $code"
  else report FAIL "zpolicy run: the command's own exit $code (got $status)"; fi
done

# A known limit, reported but not failed (docs/macos.md, "Limits"): on a case-insensitive
# volume a missing protected name can be created in another spelling, which then answers
# to the protected name.
if sandboxed 'echo SECRET=1 > .ENV' && [[ -e "$ws/.env" ]]; then
  echo "NOTE  .ENV could be created while .env was missing, and .env now opens it"
fi

echo "$failures check(s) failed"
[[ $failures -eq 0 ]]
