#!/usr/bin/env python3
"""Runner overhead: `zpolicy run -- true` against bwrap started the same way, same argv.

`zpolicy run` resolves the policy, emits both artifacts, verifies them with the analyzer
and runs the bound lints, creates placeholders, then starts bwrap with the verified argv
(descriptor binds, `--json-status-fd 4`, `--block-fd N`), the seccomp program on fd 3 and
the status pipe on fd 4, checks the sandbox while bwrap blocks, releases it and
supervises it. Two baselines, each spawned by Python with vfork as zpolicy itself is:

* plan argv: exactly the argv `zpolicy plan --format json -- true` prints, i.e. the one
  `run` executes: each bind source opened (O_PATH) on the descriptor the plan names, the
  program in a pipe on fd 3, a status pipe on fd 4, and the block pipe already written,
  so bwrap never waits. This is the issue's "bwrap started the same way with the same
  argv"; the target ratio is against it.
* compile argv: `compile --workspace` output (path binds, no --block-fd), kept so that
  figures before 2026-12-05 stay comparable.

Every side gets /dev/null as stdin and stdout (stderr stays the script's): a regular file
there (the script's output redirected to a log) makes `run` hand the command a pipe and copy
it into the file on threads of its own (docs/run.md "Standard input and output"), which
bwrap by hand does not do, and which is not the issue's case.

Runs alternate (A, B, C, A, B, C, ...) so that drift in machine load hits all equally; the
figures are ratios of medians. On a loaded machine run the whole script under
`chrt -f 50` (children inherit it): every process of both sides then preempts the load,
which is how the 2026-12-05 figures were taken (docs/benchmarks.md).

Workspace: by default an empty directory (mktemp -d), as a user's first `zpolicy run`
sees it: every run creates the default's protected paths as placeholders (and records
them), and removes them afterwards; that is zpolicy's own work, so the plan-argv baseline
gets the same directories made before it starts and removed after it ends, untimed.
With --existing the protected paths exist (the layout of the figures before 2026-12-05
07:30), so no run creates anything.

Usage: run_overhead.py [ZPOLICY] [N] [--policy-file] [--existing]
  --policy-file  run zpolicy with `--policy FILE` (the default's text) instead of the
                 built-in default, which adds the YAML parse.
"""
import base64
import fcntl
import json
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
existing = "--existing" in sys.argv

with tempfile.TemporaryDirectory(prefix="zpolicy-bench-", dir="/var/tmp") as base:
    ws = os.path.join(base, "ws")
    os.mkdir(ws)
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TERM", "USER")}
    # The placeholders a run makes in the empty workspace (the default's top-level protected
    # names), shallowest first, as the plan lists them: a list written here fell behind the
    # default (its `HEAD` made the by-hand runs fail).
    empty = json.loads(subprocess.check_output([zpolicy, "plan", "--format", "json", "--", "true"],
                                               cwd=ws, env=env))
    protected = [os.path.relpath(p["path"], ws) for p in empty["placeholders"]]

    def make_protected():
        for p in protected:
            os.makedirs(os.path.join(ws, p), exist_ok=True)

    def remove_protected():
        for p in reversed(protected):
            os.rmdir(os.path.join(ws, p))

    # compile --workspace sees the protected paths as run sees them once it made them.
    make_protected()
    out = os.path.join(base, "out")
    policy = os.path.join(base, "policy.yaml")  # outside the workspace (lint ZP004)
    with open(policy, "w") as f:
        f.write(subprocess.check_output([zpolicy, "show-default"], text=True))
    subprocess.check_call([zpolicy, "compile", policy, "--target", "linux", "--workspace", ws,
                           "--out", out])
    bwrap_args = open(os.path.join(out, "bwrap.args")).read().splitlines()
    argv = ["/usr/bin/bwrap", *bwrap_args, "--json-status-fd", "4", "--", "/usr/bin/true"]
    bpf = os.path.join(out, "seccomp.bpf")
    if not existing:
        remove_protected()
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL}
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
            subprocess.run(argv, cwd=ws, env=env, check=True, pass_fds=(3, 4), **quiet)
        finally:
            os.close(3)
            os.close(4)
            os.read(r, 4096)
            os.close(r)

    plan = json.loads(subprocess.check_output([zpolicy, "plan", "--format", "json", "--", "true"],
                                              cwd=ws, env=env))
    assert plan["backend"] == "bwrap" and plan["zpolicy_plan"] == 7

    def content(fd):
        c = fd["content"]
        return base64.b64decode(c["base64"]) if isinstance(c, dict) else c.encode()

    def bwrap_plan_argv():
        # Every descriptor the plan names, each dup'ed onto its number in the parent so
        # that Python spawns with vfork; the block pipe is released before the spawn.
        wanted = [(os.open(b["path"], os.O_PATH | os.O_NOFOLLOW), b["fd"]) for b in plan["binds"]]
        for fd in plan["fds"]:
            if fd["when"] == "start":  # the environment (--args): a memfd, as run hands it
                m = os.memfd_create("environment", os.MFD_CLOEXEC)
                os.write(m, content(fd))
                os.lseek(m, 0, os.SEEK_SET)
                wanted.append((m, fd["fd"]))
            else:  # the program: a pipe filled before the spawn (run fills it at the release)
                pr, pw = os.pipe()
                os.write(pw, content(fd))
                os.close(pw)
                wanted.append((pr, fd["fd"]))
        sr, sw = os.pipe()
        kept = fcntl.fcntl(sr, fcntl.F_DUPFD, 64)  # the status read end stays ours, above them all
        os.close(sr)
        sr = kept
        br, bw = os.pipe()
        os.write(bw, b"1")
        os.close(bw)
        wanted += [(sw, plan["status_fd"]), (br, plan["block_fd"])]
        high = [fcntl.fcntl(src, fcntl.F_DUPFD, 64) for src, _ in wanted]
        for src, _ in wanted:
            os.close(src)
        for h, (_, dst) in zip(high, wanted):
            os.dup2(h, dst)
            os.close(h)
        try:
            subprocess.run(plan["argv"], cwd=plan["cwd"], env=dict(e.split("=", 1) for e in plan["exe_env"]),
                           check=True, pass_fds=[dst for _, dst in wanted], **quiet)
        finally:
            for _, dst in wanted:
                os.close(dst)
            while os.read(sr, 4096):
                pass
            os.close(sr)

    def via_zpolicy():
        subprocess.run(zp_argv, cwd=ws, env=env, check=True, **quiet)

    def timed(run):
        # The protected paths exist while bwrap runs by hand, as they do while run runs.
        if not existing:
            make_protected()
        t = time.perf_counter()
        run()
        elapsed = time.perf_counter() - t
        if not existing:
            remove_protected()
        return elapsed

    for _ in range(10):
        timed(bwrap_plan_argv)
        timed(bwrap_same_way)
        via_zpolicy()
    a, c, b = [], [], []
    left_behind = 0
    for _ in range(n):
        a.append(timed(bwrap_plan_argv))
        c.append(timed(bwrap_same_way))
        t = time.perf_counter(); via_zpolicy(); b.append(time.perf_counter() - t)
        if not existing and os.listdir(ws):
            # Another run was live on the host (another user's, a test suite's): zpolicy
            # then leaves its placeholders for the last run to reconcile, and skips that
            # work. Counted, and removed so that the next run starts empty again.
            left_behind += 1
            remove_protected()
    ma, mc, mb = statistics.median(a), statistics.median(c), statistics.median(b)

    def spread(v):
        # The quartiles: a wide spread means the machine was not quiet (or not under chrt).
        q = statistics.quantiles(v, n=4)
        return f"(q1 {q[0]*1000:.2f}, q3 {q[2]*1000:.2f})"

    print(f"runs: {n} alternating triples ({' '.join(zp_argv[1:])}), "
          f"{'protected paths existing' if existing else 'empty workspace'}")
    print(f"bwrap, plan argv, same way    : median {ma*1000:.2f} ms {spread(a)}")
    print(f"bwrap, compile argv, same way : median {mc*1000:.2f} ms {spread(c)}")
    print(f"zpolicy run                   : median {mb*1000:.2f} ms {spread(b)}")
    if not existing:
        print(f"runs that found another run live and left their placeholders: {left_behind}")
    print(f"ratio to the plan argv        : {mb/ma:.3f} (target <= 1.3)")
    print(f"ratio to the compile argv     : {mb/mc:.3f}")
    print(f"zpolicy's own cost            : {(mb-ma)*1000:.2f} ms")
