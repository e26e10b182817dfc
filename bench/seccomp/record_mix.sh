#!/usr/bin/env bash
# Records the syscall mix that shapes the seccomp decision tree: `strace -f -c` over four
# everyday workloads. Run by hand from the repository root; then regenerate the weights:
#   scripts/gen_syscall_weights.py bench/seccomp/mix/*.txt > emitters/seccomp/syscall_weights.inc
set -euo pipefail
out=bench/seccomp/mix
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
strace -f -c -o "$out/git.txt" git status >/dev/null
printf '#include <vector>\n#include <string>\nint main(){std::vector<std::string> v{"a","b"}; return (int)v.size();}\n' >"$tmp/t.cpp"
strace -f -c -o "$out/gcc.txt" g++ -O1 -o "$tmp/t" "$tmp/t.cpp"
strace -f -c -o "$out/python.txt" python3 -c 'import json,os; d={str(i):i*i for i in range(20000)}; s=json.dumps(d); [os.stat("/usr/lib/python3.11/"+p) for p in os.listdir("/usr/lib/python3.11")[:200]]; print(len(json.loads(s)))' >/dev/null
strace -f -c -o "$out/shell.txt" sh -c 'find /usr/include -name "*.h" | head -2000 | xargs cat | grep define | sort | uniq -c > /dev/null'
