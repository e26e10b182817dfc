#!/usr/bin/env python3
"""Runner overhead: `zpolicy run -- true` against the same bwrap argv run by hand.

Both sides get the same compiled policy (the built-in default bound to a scratch
workspace, `zpolicy compile --workspace`), the same seccomp program on fd 3 and the same
command. Runs alternate (A, B, A, B, ...) so that drift in machine load hits both
equally; the figure is the ratio of the medians. Usage: run_overhead.py [ZPOLICY] [N]

The by-hand run passes the seccomp program with a preexec_fn, which makes Python fork()
its whole interpreter instead of using vfork: on small virtual machines that alone can
cost more than zpolicy's fixed overhead. A third run, bwrap by hand with fd 3 set up
in the parent (so Python spawns it with vfork, as zpolicy is spawned), shows the
overhead without that handicap; its ratio is printed as well.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

zpolicy = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/zpolicy")
n = int(sys.argv[2]) if len(sys.argv) > 2 else 200

with tempfile.TemporaryDirectory(prefix="zpolicy-bench-") as ws:
    for protected in (".git", ".env", ".env.local", "node_modules", ".next", "data/agent-sessions"):
        os.makedirs(os.path.join(ws, protected), exist_ok=True)
    out = os.path.join(ws, ".out")
    policy = os.path.join(ws, ".policy.yaml")
    with open(policy, "w") as f:
        f.write(subprocess.check_output([zpolicy, "show-default"], text=True))
    subprocess.check_call([zpolicy, "compile", policy, "--target", "linux", "--workspace", ws, "--out", out])
    args = open(os.path.join(out, "bwrap.args")).read().splitlines()
    bpf = os.path.join(out, "seccomp.bpf")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TERM", "USER")}

    def by_hand():
        with open(bpf, "rb") as f:
            os.set_inheritable(f.fileno(), True)
            fd = f.fileno()
            subprocess.run(["/usr/bin/bwrap", *args, "--", "true"], cwd=ws, env=env, check=True,
                           pass_fds=(3,), preexec_fn=lambda: os.dup2(fd, 3))

    def by_hand_vfork():
        fd = os.open(bpf, os.O_RDONLY)
        if fd != 3:
            os.dup2(fd, 3)
            os.close(fd)
        try:
            subprocess.run(["/usr/bin/bwrap", *args, "--", "true"], cwd=ws, env=env, check=True,
                           pass_fds=(3,))
        finally:
            os.close(3)

    def via_zpolicy():
        subprocess.run([zpolicy, "run", "--policy", policy, "--", "true"], cwd=ws, env=env, check=True)

    for _ in range(10):
        by_hand()
        by_hand_vfork()
        via_zpolicy()
    a, v, b = [], [], []
    for _ in range(n):
        t = time.perf_counter(); by_hand(); a.append(time.perf_counter() - t)
        t = time.perf_counter(); by_hand_vfork(); v.append(time.perf_counter() - t)
        t = time.perf_counter(); via_zpolicy(); b.append(time.perf_counter() - t)
    ma, mv, mb = statistics.median(a), statistics.median(v), statistics.median(b)
    print(f"runs: {n} alternating triples")
    print(f"bwrap by hand          : median {ma*1000:.2f} ms")
    print(f"bwrap by hand, vfork'd : median {mv*1000:.2f} ms")
    print(f"zpolicy run            : median {mb*1000:.2f} ms")
    print(f"ratio                  : {mb/ma:.3f} (target <= 1.15)")
    print(f"ratio to vfork'd bwrap : {mb/mv:.3f} (zpolicy's own cost: {(mb-mv)*1000:.2f} ms)")
