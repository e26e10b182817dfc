#!/usr/bin/env python3
"""Cost of the hard-link check (compiler/resolve/hard_links) on a 100 000-object repo.

Builds, in a scratch directory, a workspace whose protected .git holds N loose objects
(256 fan-out directories, as git lays them out) next to 2 000 source files, and times
`zpolicy compile --workspace WS` (resolution, the hard-link walk, emission and
verification; no bwrap, so the walk is not drowned in sandbox start-up) in three
layouts, alternating runs so that machine load hits all equally:

  plain   objects with one link each (an ordinary clone): only the writable part of the
          workspace is walked (2 000 files, the fast path);
  clone   `git clone --local` of a repository outside the workspace: every object has a
          second name, outside every writable root; the writable walk finds nothing;
  inside  the same, but the source repository lies inside the workspace (unprotected
          directory `vendor/src`): 100 000 writable names share inodes with protected
          objects, the protected tree is walked too, and the run is refused (more than
          256 aliases to bind).

An empty workspace is the baseline. A second binary (BASELINE, e.g. a build without the
check) is timed on the same layouts when given, alternating with the first.
Usage: hard_links.py [ZPOLICY] [OBJECTS] [RUNS] [BASELINE]
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

zpolicy = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/zpolicy")
objects = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 21
baseline = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
binaries = {"zpolicy": zpolicy}
if baseline:
    binaries["baseline"] = baseline


def fill_objects(git_dir):
    for i in range(objects):
        d = os.path.join(git_dir, "objects", "%02x" % (i % 256))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "%038x" % i), "w") as f:
            f.write("x")


def sources(ws):
    for i in range(2000):
        d = os.path.join(ws, "src", "d%02d" % (i % 50))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f%d.c" % i), "w") as f:
            f.write("int x;\n")


def link_tree(src, dst):
    for root, _, files in os.walk(src):
        out = os.path.join(dst, os.path.relpath(root, src))
        os.makedirs(out, exist_ok=True)
        for name in files:
            os.link(os.path.join(root, name), os.path.join(out, name))


with tempfile.TemporaryDirectory(prefix="zpolicy-hl-", dir="/var/tmp") as top:
    layouts = {}
    empty = os.path.join(top, "empty")
    os.makedirs(empty)
    layouts["empty"] = empty
    plain = os.path.join(top, "plain")
    sources(plain)
    fill_objects(os.path.join(plain, ".git"))
    layouts["plain"] = plain
    origin = os.path.join(top, "origin")
    fill_objects(os.path.join(origin, ".git"))
    clone = os.path.join(top, "clone")
    sources(clone)
    link_tree(os.path.join(origin, ".git"), os.path.join(clone, ".git"))
    layouts["clone"] = clone
    inside = os.path.join(top, "inside")
    sources(inside)
    link_tree(os.path.join(origin, ".git"), os.path.join(inside, "vendor", "src", "git"))
    link_tree(os.path.join(inside, "vendor", "src", "git"), os.path.join(inside, ".git"))
    layouts["inside"] = inside
    policy = os.path.join(top, "policy.yaml")
    with open(policy, "w") as f:
        f.write(subprocess.check_output([zpolicy, "show-default"], text=True))

    times = {(b, name): [] for b in binaries for name in layouts}
    status = {}
    for _ in range(runs):
        for name, ws in layouts.items():
            for b, exe in binaries.items():
                t = time.perf_counter()
                p = subprocess.run([exe, "compile", policy, "--target", "linux", "--workspace", ws,
                                    "--emit", "bwrap.args"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
                times[(b, name)].append(time.perf_counter() - t)
                status[(b, name)] = (p.returncode, p.stderr.strip()[:120])
    print(f"objects={objects} runs={runs}")
    for b in binaries:
        base = statistics.median(times[(b, "empty")])
        for name in layouts:
            m = statistics.median(times[(b, name)])
            rc, err = status[(b, name)]
            print(f"{b:8s} {name:7s} median {m * 1000:8.2f} ms  (+{(m - base) * 1000:7.2f} ms)  exit {rc} {err}")
