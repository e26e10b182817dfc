#!/usr/bin/env bash
# Records everything the analyzer says, so that a change meant to keep behaviour can be
# shown to keep it byte for byte: run it on the build before the change and after, and
# `diff -r` the two directories.
#
#   bench/analyzer_identity.sh OUT [BUILD_DIR] [--mutants]
#
# For every golden policy and a few generated ones, both targets: `compile` (portable and
# bound to a scratch workspace), `verify` of its own artifacts and of every other
# policy's (which yields findings with traces), `check`, and `explain` of a fixed set of
# paths for every operation. With --mutants also the mutation suites, each mutant with
# every finding and trace the verifier gives (ZPOLICY_MUTANT_DUMP, tests/unit/support/
# mutant_dump.hpp); that part takes minutes.
set -euo pipefail
out=$(realpath -m "$1")
build=$(realpath "${2:-build}")
mutants=${3:-}
src=$(cd "$(dirname "$0")/.." && pwd)
zp="$build/zpolicy"
[[ -x "$zp" ]] || zp="$build/cli/zpolicy"
rm -rf "$out"
mkdir -p "$out/policies" "$out/art" "$out/explain" "$out/verify"
# A fixed scratch path: the bound artifacts name it, and must compare equal across runs
# (ZPOLICY_IDENTITY_SCRATCH picks another, for two engineers recording at once).
tmp=${ZPOLICY_IDENTITY_SCRATCH:-/tmp/zpolicy-identity-scratch}
rm -rf "$tmp"
mkdir -p "$tmp"
mkdir -p "$tmp/ws/.git" "$tmp/ws/data" "$tmp/home/.ssh"

cp "$src"/golden/*.yaml "$out/policies/"
# Generated: nested roots, deny inside writable, protect patterns, many roots.
cat >"$out/policies/gen-nested.yaml" <<'YAML'
zpolicy: 1
mode: workspace-write
filesystem:
  read: ["/usr", "/etc", "${HOME}"]
  write: ["${WORKSPACE}", "${WORKSPACE}/build", "${TMPDIR}", "${HOME}/.cache"]
  protect: [.git, "**/.env", "*/secrets", data/agent-sessions, .cache/keep]
  deny: ["${WORKSPACE}/build/private", "~/.ssh", "/etc/shadow", "${HOME}/.cache/tok"]
network: loopback
YAML
python3 - "$out/policies/gen-many.yaml" <<'PY'
import sys
n = 300
lines = ["zpolicy: 1", "mode: workspace-write", "filesystem:", '  read: ["/"]',
         '  write: ["${WORKSPACE}", "${TMPDIR}"]', "  protect:"]
lines += [f"    - p{i:04d}/sub" for i in range(n)]
lines += ["  deny:"] + [f'    - "${{HOME}}/d{i:03d}"' for i in range(n // 10)]
lines += ['    - "${WORKSPACE}/p0001/sub/deeper"']
open(sys.argv[1], "w").write("\n".join(lines) + "\nnetwork: none\n")
PY

paths=('/' '/etc/passwd' '/etc/shadow' '/usr/bin/ls' '/tmp' '/tmp/x' '${WORKSPACE}'
  '${WORKSPACE}/data' '${WORKSPACE}/.git' '${WORKSPACE}/.git/config' '${WORKSPACE}/.gitx'
  '${WORKSPACE}/.env' '${WORKSPACE}/node_modules/x' '${WORKSPACE}/secrets/k'
  '${WORKSPACE}/build/private/x' '${WORKSPACE}/data/agent-sessions/s' '${WORKSPACE}/p0001/sub/deeper'
  '${HOME}' '${HOME}/.ssh' '${HOME}/.ssh/id_rsa' '${HOME}/.aws' '${HOME}/.cache/tok'
  '${HOME}/cache/tool03/.git' '${TMPDIR}/x' '${TMPDIR}/.git')

run() {  # run NAME CMD...: stdout, stderr and exit status into $out/NAME
  local name=$1; shift
  set +e
  "$@" >"$out/$name.out" 2>"$out/$name.err"
  echo $? >"$out/$name.rc"
  set -e
  sed -i -e "s#$tmp#TMP#g" -e "s#$out#OUT#g" "$out/$name.out" "$out/$name.err"
}

for p in "$out"/policies/*.yaml; do
  n=$(basename "$p" .yaml)
  for t in linux macos; do
    run "compile-$n-$t" "$zp" compile "$p" --target "$t" --out "$out/art/$n.$t"
    run "compile-bound-$n-$t" env HOME="$tmp/home" TMPDIR="$tmp" "$zp" compile "$p" --target "$t" \
      --workspace "$tmp/ws" --out "$out/art/$n.$t.bound"
    # Bound artifacts name the scratch directory: two recordings made with different
    # ZPOLICY_IDENTITY_SCRATCH must compare equal. A host that is not macOS binds no
    # macOS artifacts (compile refuses, and the refusal is recorded).
    if [[ -d "$out/art/$n.$t.bound" ]]; then
      find "$out/art/$n.$t.bound" -type f -exec sed -i "s#$tmp#TMP#g" {} +
    fi
    for op in read write create delete; do
      for path in "${paths[@]}"; do
        key=$(printf '%s' "$path" | tr -c 'A-Za-z0-9._-' '_')
        run "explain/$n-$t-$op-$key" "$zp" explain --policy "$p" --portable "$path" --op "$op" --target "$t"
      done
    done
  done
  run "check-$n" "$zp" check "$p"
  for path in '${WORKSPACE}/data' '${WORKSPACE}/.git' '${HOME}/.ssh'; do
    key=$(printf '%s' "$path" | tr -c 'A-Za-z0-9._-' '_')
    run "explain/$n-both-$key" "$zp" explain --policy "$p" --portable "$path" --op write
  done
done

# Every policy against every policy's artifacts: mostly findings, with their traces.
for p in "$out"/policies/*.yaml; do
  n=$(basename "$p" .yaml)
  for a in "$out"/art/*.linux "$out"/art/*.macos; do
    t=${a##*.}
    run "verify/$n-vs-$(basename "$a")" "$zp" verify "$p" "$a" --target "$t"
  done
done

if [[ "$mutants" == --mutants ]]; then
  ZPOLICY_MUTANT_DUMP="$out/mutants.txt" "$build/tests/zpolicy_mutation_tests" \
    --run_test=@mutation --log_level=message >"$out/mutation.log" 2>&1 || echo "mutation tier failed" >>"$out/mutation.log"
  # Keep the kill counts and survivor lists; drop timings.
  grep -v -i "leaving test\|elapsed\|time" "$out/mutation.log" >"$out/mutation.summary" || true
  rm "$out/mutation.log"
fi
echo "recorded into $out"
