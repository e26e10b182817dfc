#!/usr/bin/env python3
"""Records what `zpolicy verify` says of every tests/data/verify-bwrap/*.case (the format
tests/unit/verify_bwrap_regions.cpp reads), so that two builds can be compared byte for
byte: OUT/NAME.{out,err,rc} and the artifacts `compile` wrote, OUT/NAME.art/. The scratch
directory is made at the same path each time (WORK), since the bound artifacts name it.

    bench/verify_cases.py ZPOLICY OUT [WORK]
"""
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZP, OUT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
WORK = sys.argv[3] if len(sys.argv) > 3 else "/tmp/zpolicy-verify-cases"


def read_case(path):
    case = {"bound": False, "edits": []}
    edit, in_replace = None, False
    text = open(path).read()
    for line in (text[:-1] if text.endswith("\n") else text).split("\n"):
        if line.startswith("#"):
            continue
        if line.startswith("@before "):
            edit = {"before": line[8:], "replace": [], "lines": []}
            case["edits"].append(edit)
            in_replace = False
        elif line == "@replace":
            edit = {"before": None, "replace": [], "lines": []}
            case["edits"].append(edit)
            in_replace = True
        elif line == "@with":
            in_replace = False
        elif edit is not None:
            (edit["replace"] if in_replace else edit["lines"]).append(line)
        elif line.startswith("policy "):
            case["policy"] = line[7:]
        elif line == "bound":
            case["bound"] = True
    return case


def apply(edits, args):
    for e in edits:
        if e["replace"]:
            n = len(e["replace"])
            at = next(i for i in range(len(args)) if args[i:i + n] == e["replace"])
            args[at:at + n] = e["lines"]
        else:
            at = args.index(e["before"])
            args[at:at] = e["lines"]
    return "".join(a + "\n" for a in args)


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = sorted(f for f in os.listdir(os.path.join(ROOT, "tests/data/verify-bwrap")) if f.endswith(".case"))
    for name in cases:
        case = read_case(os.path.join(ROOT, "tests/data/verify-bwrap", name))
        shutil.rmtree(WORK, ignore_errors=True)
        os.makedirs(WORK)
        policy = os.path.basename(case["policy"])
        shutil.copy(os.path.join(ROOT, case["policy"]), os.path.join(WORK, policy))
        bind = []
        if case["bound"]:
            os.makedirs(os.path.join(WORK, "ws"))
            bind = ["--workspace", os.path.join(WORK, "ws")]
        subprocess.run([ZP, "compile", policy, "--target", "linux", "--out", "out"] + bind,
                       cwd=WORK, check=True, capture_output=True)
        args = open(os.path.join(WORK, "out/bwrap.args")).read().split("\n")
        if args and args[-1] == "":
            args.pop()
        open(os.path.join(WORK, "out/bwrap.args"), "w").write(apply(case["edits"], args))
        p = subprocess.run([ZP, "verify", policy, "out", "--target", "linux"] + bind,
                           cwd=WORK, capture_output=True)
        base = os.path.join(OUT, name[:-5])
        for ext, data in (("out", p.stdout), ("err", p.stderr), ("rc", b"%d\n" % p.returncode)):
            open(base + "." + ext, "wb").write(data)
        shutil.rmtree(base + ".art", ignore_errors=True)
        shutil.copytree(os.path.join(WORK, "out"), base + ".art")
    shutil.rmtree(WORK)


main()
