#!/usr/bin/env python3
"""Runner overhead: `zpolicy run -- true` against bwrap started the same way, same argv.

`zpolicy run` resolves the policy, emits both artifacts, verifies them with the analyzer
and runs the bound lints, creates placeholders, then starts bwrap with the verified
bwrap.args, `--json-status-fd 4 -- true`, the seccomp program on fd 3 and the status pipe
on fd 4, and supervises it. The baseline starts /usr/bin/bwrap with exactly that argv and
those two descriptors (the program read from the `compile --workspace` output, a pipe on
fd 4), spawned by Python with vfork as zpolicy itself is. Runs alternate (A, B, A, B, ...)
so that drift in machine load hits both equally; the figure is the ratio of the medians.

Usage: run_overhead.py [ZPOLICY] [N] [--policy-file]
  --policy-file  run zpolicy with `--policy FILE` (the default's text) instead of the
                 built-in default, which adds the YAML parse.
"""
import fcntl
import os
import statistics
import subprocess
import sys
import tempfile
import time

args = [a for a in sys.argv[1:] if not a.startswith("--")]
zpolicy = os.path.abspath(args[0] if args else "build/zpolicy")
n = int(args[1]) if len(args) > 1 else 200
with_policy_file = "--policy-file" in sys.argv

with tempfile.TemporaryDirectory(prefix="zpolicy-bench-", dir="/var/tmp") as base:
    ws = os.path.join(base, "ws")
    os.mkdir(ws)
    # Existing protected paths: no placeholders, so compile's output is exactly what runs.
    for protected in (".git", ".env", ".env.local", "node_modules", ".next", "data/agent-sessions"):
        os.makedirs(os.path.join(ws, protected), exist_ok=True)
    out = os.path.join(base, "out")
    policy = os.path.join(base, "policy.yaml")  # outside the workspace (lint ZP004)
    with open(policy, "w") as f:
        f.write(subprocess.check_output([zpolicy, "show-default"], text=True))
    subprocess.check_call([zpolicy, "compile", policy, "--target", "linux", "--workspace", ws,
                           "--out", out])
    bwrap_args = open(os.path.join(out, "bwrap.args")).read().splitlines()
    argv = ["/usr/bin/bwrap", *bwrap_args, "--json-status-fd", "4", "--", "/usr/bin/true"]
    bpf = os.path.join(out, "seccomp.bpf")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TERM", "USER")}
    zp_argv = [zpolicy, "run"] + (["--policy", policy] if with_policy_file else []) + ["--", "true"]

    def bwrap_same_way():
        # fds 3 and 4 set up in the parent, so Python spawns with vfork (no preexec_fn).
        fd = os.open(bpf, os.O_RDONLY)
        r, w = os.pipe()
        high = [fcntl.fcntl(x, fcntl.F_DUPFD, 10) for x in (fd, w, r)]
        for x in (fd, w, r):
            os.close(x)
        os.dup2(high[0], 3)
        os.dup2(high[1], 4)
        os.close(high[0])
        os.close(high[1])
        r = high[2]
        try:
            subprocess.run(argv, cwd=ws, env=env, check=True, pass_fds=(3, 4))
        finally:
            os.close(3)
            os.close(4)
            os.read(r, 4096)
            os.close(r)

    def via_zpolicy():
        subprocess.run(zp_argv, cwd=ws, env=env, check=True)

    for _ in range(10):
        bwrap_same_way()
        via_zpolicy()
    a, b = [], []
    for _ in range(n):
        t = time.perf_counter(); bwrap_same_way(); a.append(time.perf_counter() - t)
        t = time.perf_counter(); via_zpolicy(); b.append(time.perf_counter() - t)
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"runs: {n} alternating pairs ({' '.join(zp_argv[1:])})")
    print(f"bwrap, same argv, same way : median {ma*1000:.2f} ms")
    print(f"zpolicy run                : median {mb*1000:.2f} ms")
    print(f"ratio                      : {mb/ma:.3f} (target <= 1.3)")
    print(f"zpolicy's own cost         : {(mb-ma)*1000:.2f} ms")
