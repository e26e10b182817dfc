#!/usr/bin/env python3
"""End-to-end `zpolicy compile` latency, and what the verification adds to it.

What a user waits for: process start, parse, resolve, emit, the independent
verification and writing the artifacts. For each golden policy and target three
commands alternate N times (default 50, after 5 warm-up rounds):

  zpolicy compile POLICY --target T --out DIR
  zpolicy_compile_bench --once verify   POLICY T DIR   (the same steps, same library)
  zpolicy_compile_bench --once noverify POLICY T DIR   (the same, without verification)

"verification adds" is (verify - noverify) / noverify of the two bench medians: the
issue's "verification adds at most 25% to compile time". The zpolicy column shows that
the bench's verify run costs what the real command costs.
Usage: compile_cli.py [ZPOLICY] [N] [BENCH]
"""
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

zpolicy = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/zpolicy")
n = int(sys.argv[2]) if len(sys.argv) > 2 else 50
bench = os.path.abspath(sys.argv[3] if len(sys.argv) > 3
                        else os.path.join(os.path.dirname(zpolicy), "zpolicy_compile_bench"))
golden = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


print("| policy | target | zpolicy compile µs | with verification µs | without µs | verification adds |")
print("|---|---|---:|---:|---:|---:|")
with tempfile.TemporaryDirectory(prefix="zpolicy-compile-") as out:
    for policy in sorted(glob.glob(os.path.join(golden, "*.yaml"))):
        for target in ("linux", "macos"):
            cmds = [[zpolicy, "compile", policy, "--target", target, "--out", out],
                    [bench, "--once", "verify", policy, target, out],
                    [bench, "--once", "noverify", policy, target, out]]
            for _ in range(5):
                for c in cmds:
                    timed(c)
            times = [[], [], []]
            for _ in range(n):
                for c, t in zip(cmds, times):
                    t.append(timed(c))
            cli, with_v, without = (statistics.median(t) * 1e6 for t in times)
            name = os.path.splitext(os.path.basename(policy))[0]
            print(f"| {name} | {target} | {cli:.0f} | {with_v:.0f} | {without:.0f} | "
                  f"{(with_v - without) / without * 100:.0f}% |", flush=True)
