#!/usr/bin/env python3
"""Pattern expansion on a generated monorepo (issue 14 §5, docs/benchmarks.md).

Generates (or reuses) a workspace of 50 000 files with 200 nested repositories, then
times, warm-cache and alternating, `git ls-files` in the top repository (whose index
lists all 50 000 files) against zpolicy's expansion of the default `**/.git`
(zpolicy_pattern_bench, in-process). Prints medians.

Usage: bench/patterns/run.py [--dir DIR] [--runs N] [--bench build/zpolicy_pattern_bench]
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

FILES = 50_000
REPOS = 200


def generate(ws):
    """10 000 files in the top repository's own tree, 40 000 in 200 nested repositories
    (200 files each, in 10 directories); the top index tracks all 50 000."""
    if os.path.exists(os.path.join(ws, ".generated")):
        return
    os.makedirs(ws, exist_ok=True)
    count = 0

    def put(rel):
        nonlocal count
        path = os.path.join(ws, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(rel + "\n")
        count += 1

    for d in range(100):
        for f in range(100):
            put(f"src/d{d:02}/f{f:03}.c")
    per_repo = (FILES - count) // REPOS
    for r in range(REPOS):
        group = f"packages/g{r // 20:02}"
        for f in range(per_repo):
            put(f"{group}/p{r:03}/dir{f % 10}/f{f:03}.js")
    assert count == FILES, count
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=ws)
    subprocess.run(["git", "init", "-q", ws], check=True, env=env)
    subprocess.run(["git", "-C", ws, "add", "-A"], check=True, env=env)
    # The nested repositories after the top index was written, so that it lists every file.
    for r in range(REPOS):
        group = f"packages/g{r // 20:02}"
        subprocess.run(["git", "init", "-q", os.path.join(ws, group, f"p{r:03}")], check=True,
                       env=env)
    open(os.path.join(ws, ".generated"), "w").close()


def time_git(ws):
    """Wall time and CPU time (user + system, from the child's rusage) in ms."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(["git", "-C", ws, "ls-files"], check=True, stdout=subprocess.DEVNULL)
    wall = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def run_bench(bench, ws):
    out = subprocess.run([bench, ws, "5"], check=True, capture_output=True, text=True).stdout
    return {k: float(v) for k, v in (line.split() for line in out.splitlines())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/var/tmp/zpolicy-pattern-bench")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--bench", default="build/zpolicy_pattern_bench")
    a = ap.parse_args()
    generate(a.dir)
    git_wall, git_cpu, results = [], [], []
    time_git(a.dir)
    run_bench(a.bench, a.dir)  # warm the cache for both
    for _ in range(a.runs):
        wall, cpu = time_git(a.dir)
        git_wall.append(wall)
        git_cpu.append(cpu)
        results.append(run_bench(a.bench, a.dir))
    med = lambda key: statistics.median(r[key] for r in results)
    print(f"workspace {a.dir}: {FILES} files, {REPOS} nested repositories")
    print(f"entries read by the walk      {int(results[0]['entries_read'])}")
    print(f"matches (nested .git)         {int(results[0]['matches'])}")
    print(f"protected paths / pins        {int(results[0]['protected_paths'])} / "
          f"{int(results[0]['pins'])}")
    print(f"load average at the end       {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("                              wall (median)  CPU (median of means)")
    print(f"git ls-files (process)        {statistics.median(git_wall):8.2f} ms  "
          f"{statistics.median(git_cpu):8.2f} ms")
    for label, key in [("walk alone", "walk"), ("resolve, default policy", "resolve_default"),
                       ("resolve, without patterns", "resolve_without_patterns"),
                       ("compile --workspace (+verify)", "compile_workspace")]:
        print(f"{label:29} {med(key + '_ms'):8.2f} ms  {med(key + '_cpu_ms'):8.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
