#!/usr/bin/env python3
"""Issue 16 with issue 19's budget: `zpolicy diff --artifacts OLD NEW` on hostile
`seccomp.bpf` pairs (each program valid for the kernel's loader, 4096 paths, walk_paths'
limit) must be answered, or refused with its reason, in under 2 s of CPU and 512 MiB
(docs/review.md "Artifacts"). Each side is the golden default's Linux directory with
its `seccomp.bpf` replaced, in a scratch directory of its own (`mkdtemp`), compared under
/usr/bin/time -v. Prints a Markdown table (CPU seconds = user + system, the median of
RUNS runs; wall seconds of the same run; peak RSS; exit; the first line of the answer)
and exits 1 when any case is over budget or the command dies of a signal.

    bench/review_hostile.py [ZPOLICY] [RUNS]
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZP = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/zpolicy"))
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
BUDGET_S, BUDGET_KB = 2.0, 512 * 1024
GIVE_UP_S = 120  # a case still running then is killed and reported over budget
GOLDEN = os.path.join(ROOT, "golden")
ALLOW, ERRNO_EPERM = 0x7FFF0000, 0x00050001
ARG0, ARG1 = 16, 24  # offsets of the arguments' low words in seccomp_data


def ins(code, jt, jf, k):
    return struct.pack("=HBBI", code, jt, jf, k)


def forking(offset, action, bits=12):
    """Load a word, then one `jset` per bit whose both ways join again: 2^bits paths."""
    out = ins(0x20, 0, 0, offset)
    for bit in range(bits):
        out += ins(0x45, 0, 1, 1 << bit) + ins(0x05, 0, 0, 0)
    return out + ins(0x06, 0, 0, action)


def ret(action):
    return ins(0x06, 0, 0, action)


CASES = [
    ("4096 paths on arg0 against 4096 on arg1 (16.7 M pairs)",
     forking(ARG0, ALLOW), forking(ARG1, ERRNO_EPERM)),
    ("4096 paths against 4096 on the same word (512 Ki pairs, most empty)",
     forking(ARG0, ALLOW), forking(ARG0, ERRNO_EPERM)),
    ("4096 paths against one return (4096 cells)", forking(ARG0, ALLOW), ret(ERRNO_EPERM)),
]


def run(cmd):
    res = []
    for _ in range(RUNS):
        p = subprocess.run(["/usr/bin/time", "-v", "timeout", "-s", "KILL", str(GIVE_UP_S)] + cmd,
                           capture_output=True, text=True)
        err = p.stderr
        user = float(re.search(r"User time \(seconds\): ([\d.]+)", err).group(1))
        sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", err).group(1))
        wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", err).group(1)
        secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall.split(":"))))
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
        sig = re.search(r"Command terminated by signal (\d+)", err)
        sig = sig.group(1) if sig else None
        if p.returncode == 137:  # timeout's KILL
            sig = "KILL after %d s" % GIVE_UP_S
        lines = [l for l in (p.stdout + err).splitlines() if l and not l.startswith("\t")]
        answer = lines[0] if lines else ""
        m = re.search(r"(too complex to compare exactly: [^;]*)", p.stdout + err)
        if m:
            answer = m.group(1)
        elif p.returncode == 1:
            answer = re.sub(r"^.*?: ", "", answer)
        res.append((user + sys_, secs, rss, p.returncode, sig, answer))
    res.sort()
    return res[len(res) // 2]


def main():
    tmp = tempfile.mkdtemp()
    ok = True
    print("| programs | exit | answer | CPU s | wall s | peak RSS MiB | budget |")
    print("|---|---:|---|---:|---:|---:|---|")
    try:
        for name, old, new in CASES:
            dirs = []
            for side, program in (("old", old), ("new", new)):
                d = os.path.join(tmp, str(len(dirs)) + side)
                shutil.copytree(os.path.join(GOLDEN, "default.linux"), d)
                open(os.path.join(d, "seccomp.bpf"), "wb").write(program)
                dirs.append(d)
            cpu, wall, rss, code, sig, answer = run([ZP, "diff", "--artifacts"] + dirs)
            within = cpu < BUDGET_S and rss < BUDGET_KB and sig is None
            ok = ok and within
            print("| %s | %s | %s | %.2f | %.2f | %.1f | %s |" % (
                name, ("signal " + sig) if sig else code, answer.replace("|", "\\|"), cpu, wall,
                rss / 1024, "ok" if within else "OVER"))
            for d in dirs:
                shutil.rmtree(d)
    finally:
        shutil.rmtree(tmp)
    sys.exit(0 if ok else 1)


main()
