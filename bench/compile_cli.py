#!/usr/bin/env python3
"""End-to-end `zpolicy compile` latency for each golden policy and target.

What a user waits for: process start, parse, resolve, emit, the independent
verification and writing the artifacts. Median of N runs (default 50) per row, after
5 warm-up runs. Usage: compile_cli.py [ZPOLICY] [N]. Set against the in-process
"verify" column of zpolicy_compile_bench, it gives verification's share of a compile
(docs/benchmarks.md).
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
golden = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")

print("| policy | target | zpolicy compile, median µs |")
print("|---|---|---:|")
with tempfile.TemporaryDirectory(prefix="zpolicy-compile-") as out:
    for policy in sorted(glob.glob(os.path.join(golden, "*.yaml"))):
        for target in ("linux", "macos"):
            cmd = [zpolicy, "compile", policy, "--target", target, "--out", out]
            for _ in range(5):
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            times = []
            for _ in range(n):
                t = time.perf_counter()
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                times.append(time.perf_counter() - t)
            name = os.path.splitext(os.path.basename(policy))[0]
            print(f"| {name} | {target} | {statistics.median(times) * 1e6:.0f} |", flush=True)
