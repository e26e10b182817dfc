#!/usr/bin/env python3
"""What verification adds to compile time, for two builds measured side by side.

The VM's absolute times drift by about ±20% between runs, and the ratio with them, so a
change to the verifier is judged against the build before it in the same run: the four
commands

  OLD --once verify|noverify POLICY TARGET DIR
  NEW --once verify|noverify POLICY TARGET DIR

(OLD and NEW are zpolicy_compile_bench binaries) alternate N times after 5 warm-up
rounds, and each build's "verification adds" is (verify - noverify) / noverify of its
medians, as in compile_cli.py.
Usage: compile_ab.py OLD_BENCH NEW_BENCH POLICY TARGET [N]
"""
import statistics
import subprocess
import sys
import tempfile
import time

old, new, policy, target = sys.argv[1:5]
n = int(sys.argv[5]) if len(sys.argv) > 5 else 300

with tempfile.TemporaryDirectory(prefix="zpolicy-compile-ab-") as out:
    cmds = {(build, mode): [binary, "--once", mode, policy, target, out]
            for build, binary in (("old", old), ("new", new))
            for mode in ("verify", "noverify")}
    times = {k: [] for k in cmds}
    for round_no in range(n + 5):
        for k, cmd in cmds.items():
            t = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            if round_no >= 5:
                times[k].append(time.perf_counter() - t)
    for build in ("old", "new"):
        with_v = statistics.median(times[(build, "verify")]) * 1e6
        without = statistics.median(times[(build, "noverify")]) * 1e6
        print(f"{build}: with verification {with_v:.0f} µs, without {without:.0f} µs, "
              f"verification adds {(with_v - without) / without * 100:.1f}%")
