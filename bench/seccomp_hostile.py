#!/usr/bin/env python3
"""Issue 19 §2 for the seccomp verifier: hostile programs (each a valid `seccomp.bpf` the
kernel would load, so under 32 KiB) must be answered in under 2 s of CPU and 512 MiB.
Writes each program next to the golden default's other artifacts in a scratch directory,
runs `zpolicy verify golden/default.yaml DIR --target linux` under /usr/bin/time -v,
prints a Markdown table (CPU seconds = user + system, the median of RUNS runs; wall
seconds of the same run; peak RSS; what the verifier answered) and exits 1 when any
case is over budget or the command dies of a signal.

    bench/seccomp_hostile.py [ZPOLICY] [RUNS]
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
ALLOW, KILL = 0x7FFF0000, 0x80000000
ARG0, ARG1, ARG2 = 16, 24, 32  # offsets of the arguments' low words in seccomp_data
NR = 0


def ins(code, jt, jf, k):
    return struct.pack("=HBBI", code, jt, jf, k)


def ld(offset):
    return ins(0x20, 0, 0, offset)


def ret(k):
    return ins(0x06, 0, 0, k)


def golden_program():
    return open(os.path.join(GOLDEN, "default.linux/seccomp.bpf"), "rb").read()


def splits(tests):
    """One fork per (offset, bit), both sides joining again: 2^len(tests) paths."""
    out = b""
    for offset, bit in tests:
        out += ld(offset) + ins(0x45, 0, 1, 1 << bit) + ins(0x05, 0, 0, 0)
    return out


def excluded(offset, patterns):
    """`(word & mask) == value` answers kill: the way on excludes each pattern."""
    out = b""
    for mask, value in patterns:
        out += ld(offset) + ins(0x54, 0, 0, mask) + ins(0x15, 0, 1, value) + ret(KILL)
    return out


def chain(offset, count):
    """`word == i` answers kill for i < count: the way on excludes count values."""
    return ld(offset) + b"".join(ins(0x15, 0, 1, i) + ret(KILL) for i in range(count))


# Independent pairs of bits, each with one of four values excluded (3^15 ways through
# bits 2..31), then all four values of bits 0..1: empty, but a search that branches on
# the high bits first meets that only at the bottom of each branch.
PAIRS = [(3 << k, 1 << k) for k in range(2, 32, 2)] + [(3, v) for v in range(4)]
# Patterns that never match on the way on (bit 31 is known clear there) but that every
# step of a search over the word must test.
INERT = [((1 << 31) | (j << 2) | 1, (1 << 31) | (j << 2) | 1) for j in range(850)]

CASES = [
    ("14 argument splits, then the golden program", splits([(ARG0, b) for b in range(14)]) +
     golden_program()),
    ("14 argument splits, then allow", splits([(ARG0, b) for b in range(14)]) + ret(ALLOW)),
    ("7+7 splits on arg1 and arg2, then allow",
     splits([(o, b) for b in range(7) for o in (ARG1, ARG2)]) + ret(ALLOW)),
    ("11 splits, then the golden program", splits([(ARG0, b) for b in range(11)]) +
     golden_program()),
    ("arg0 == 0..2046 kill, else allow", chain(ARG0, 2047) + ret(ALLOW)),
    ("nr == 0..2046 kill, else allow", chain(NR, 2047) + ret(ALLOW)),
    ("an empty arg0 set that is hard to prove empty", excluded(ARG0, PAIRS) + ret(ALLOW)),
    ("the same behind 850 inert patterns",
     ld(ARG0) + ins(0x45, 0, 1, 1 << 31) + ret(KILL) + excluded(ARG0, INERT + PAIRS) + ret(ALLOW)),
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
        proof = re.search(r"cannot be proven: (instruction \d+: [^\n]*?)(?:\n|$)", err)
        answer = proof.group(1) if proof else ("findings" if p.returncode == 3 else "proven")
        res.append((user + sys_, secs, rss, p.returncode, sig, answer))
    res.sort()
    return res[len(res) // 2]


def main():
    tmp = tempfile.mkdtemp()
    ok = True
    print("| program | instructions | exit | answer | CPU s | wall s | peak RSS MiB | budget |")
    print("|---|---:|---:|---|---:|---:|---:|---|")
    try:
        for name, program in CASES:
            if len(program) // 8 > 4096:
                raise SystemExit("%s: %d instructions, more than the kernel loads" %
                                 (name, len(program) // 8))
            d = os.path.join(tempfile.mkdtemp(dir=tmp), "out")
            shutil.copytree(os.path.join(GOLDEN, "default.linux"), d)
            open(os.path.join(d, "seccomp.bpf"), "wb").write(program)
            cpu, wall, rss, code, sig, answer = run(
                [ZP, "verify", os.path.join(GOLDEN, "default.yaml"), d, "--target", "linux"])
            within = cpu < BUDGET_S and rss < BUDGET_KB and sig is None
            ok = ok and within
            print("| %s | %d | %s | %s | %.2f | %.2f | %.1f | %s |" % (
                name, len(program) // 8, ("signal " + sig) if sig else code, answer, cpu, wall,
                rss / 1024, "ok" if within else "OVER"))
    finally:
        shutil.rmtree(tmp)
    sys.exit(0 if ok else 1)


main()
