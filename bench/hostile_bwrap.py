#!/usr/bin/env python3
"""Issue 19 §2: hostile bwrap and path inputs (and deep paths for the macOS target), each under 1 MiB, must be answered in
under 2 s of CPU and 512 MiB. Writes each input into a scratch directory, runs the
zpolicy command on it under /usr/bin/time -v, prints a Markdown table (CPU seconds =
user + system, the median of RUNS runs; wall seconds of the same run; peak RSS) and
exits 1 when any input is over budget or the command dies of a signal.

    bench/hostile_bwrap.py [ZPOLICY] [RUNS]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZP = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/zpolicy"))
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
BUDGET_S, BUDGET_KB, MAX_INPUT = 2.0, 512 * 1024, 1 << 20
GOLDEN = os.path.join(ROOT, "golden")


def policy(deny):
    return ("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
            "  write: [\"${WORKSPACE}\"]\n  deny: [\"%s\"]\nnetwork: none\n" % deny)


def protect_policy(protect):
    return ("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
            "  write: [\"${WORKSPACE}\"]\n  protect:\n%snetwork: none\n"
            % "".join("    - %s\n" % p for p in protect))


def golden_with(extra):
    """The golden default argv with `extra` arguments before --chdir."""
    args = open(os.path.join(GOLDEN, "default.linux/bwrap.args")).read().split("\n")
    at = args.index("--chdir")
    return "\n".join(args[:at] + extra + args[at:])


def deep(n, name="a"):
    return "/".join([name] * n)


# name -> (kind, content, command builder)
CASES = [
    ("deny root under /proc, 15 000 components", "policy", policy("/proc/" + deep(15000))),
    ("deny root, 30 000 components", "policy", policy("/x/" + deep(30000))),
    ("deny root, 200 000 components", "policy", policy("/x/" + deep(200000))),
    ("1 000 protected paths 400 components deep under ${WORKSPACE}", "policy",
     protect_policy(["d%03d/" % i + deep(399) for i in range(1000)])),
    ("explain a 15 000-component path", "explain", "/x/" + deep(15000)),
    ("--tmpfs with 100 000 components", "argv", golden_with(["--tmpfs", "/" + deep(100000, "t")])),
    ("--tmpfs with 300 000 components", "argv", golden_with(["--tmpfs", "/" + deep(300000, "t")])),
    ("60 000 x --tmpfs /t", "argv", golden_with(["--tmpfs", "/t"] * 60000)),
    ("30 000 x --ro-bind /etc /e<i>", "argv",
     golden_with(sum((["--ro-bind", "/etc", "/e%d" % i] for i in range(30000)), []))),
    ("30 000 x --chmod 0755 /tmp", "argv", golden_with(["--chmod", "0755", "/tmp"] * 30000)),
    ("20 000 x --symlink /etc /tmp/l", "argv", golden_with(["--symlink", "/etc", "/tmp/l"] * 20000)),
    ("symlink over a 100 000-component --remount-ro", "argv",
     golden_with(["--symlink", "/usr", "/tmp/l", "--bind", "/" + deep(100000, "b"),
                  "/tmp/l/" + deep(100000, "b"), "--remount-ro", "/tmp/l/" + deep(100000, "b")])),
    ("ro-bind of ${HOME} elsewhere, deny 100 000 deep under it", "bound-alias",
     None),
    # The macOS target: its profile names every directory above a deny root.
    ("macos: deny root under /proc, 15 000 components", "policy-macos",
     policy("/proc/" + deep(15000))),
    ("macos: deny root, 200 000 components", "policy-macos", policy("/x/" + deep(200000))),
    ("macos: explain a 15 000-component path", "explain-macos", "/proc/" + deep(15000)),
    ("macos: 1 000 deny roots of 1 000 bytes", "policy-macos",
     policy('", "'.join("/d%d/%s" % (i, deep(498)) for i in range(1000)))),
    ("macos: 1 000 deny roots of 1 000 bytes, one shared parent", "policy-macos",
     policy('", "'.join("/d/%s/x%d" % (deep(496), i) for i in range(1000)))),
]


def run(cmd, cwd):
    res = []
    for _ in range(RUNS):
        p = subprocess.run(["/usr/bin/time", "-v"] + cmd, cwd=cwd, capture_output=True, text=True)
        err = p.stderr
        user = float(re.search(r"User time \(seconds\): ([\d.]+)", err).group(1))
        sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", err).group(1))
        wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", err).group(1)
        secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall.split(":"))))
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
        sig = re.search(r"Command terminated by signal (\d+)", err)
        res.append((user + sys_, secs, rss, p.returncode, sig.group(1) if sig else None))
    res.sort()
    return res[len(res) // 2]


def main():
    tmp = tempfile.mkdtemp()
    ok = True
    print("| input | bytes | exit | CPU s | wall s | peak RSS MiB | budget |")
    print("|---|---:|---:|---:|---:|---:|---|")
    try:
        for name, kind, content in CASES:
            d = tempfile.mkdtemp(dir=tmp)
            target = "macos" if kind.endswith("-macos") else "linux"
            if kind.startswith("policy"):
                open(os.path.join(d, "p.yaml"), "w").write(content)
                cmd, size = [ZP, "compile", "p.yaml", "--target", target, "--out", "out"], len(content)
            elif kind.startswith("explain"):
                open(os.path.join(d, "p.yaml"), "w").write(policy(content))
                cmd, size = [ZP, "explain", "--policy", "p.yaml", "--portable", content, "--target", target], len(content)
            elif kind == "argv":
                shutil.copytree(os.path.join(GOLDEN, "default.linux"), os.path.join(d, "out"))
                open(os.path.join(d, "out/bwrap.args"), "w").write(content)
                cmd, size = [ZP, "verify", os.path.join(GOLDEN, "default.yaml"), "out",
                              "--target", "linux"], len(content)
            else:
                deny = "${HOME}/" + deep(100000)
                open(os.path.join(d, "p.yaml"), "w").write(policy(deny))
                subprocess.run([ZP, "compile", "p.yaml", "--target", "linux", "--out", "out"],
                               cwd=d, capture_output=True)
                args = open(os.path.join(d, "out/bwrap.args")).read().split("\n")
                at = args.index("--chdir")
                content = "\n".join(args[:at] + ["--ro-bind", "${HOME}", "/mnt/h"] + args[at:])
                open(os.path.join(d, "out/bwrap.args"), "w").write(content)
                cmd, size = [ZP, "verify", "p.yaml", "out", "--target", "linux"], len(content)
            if size >= MAX_INPUT:
                raise SystemExit("%s: input of %d bytes is not under 1 MiB" % (name, size))
            cpu, wall, rss, code, sig = run(cmd, d)
            within = cpu < BUDGET_S and rss < BUDGET_KB and sig is None
            ok = ok and within
            print("| %s | %d | %s | %.2f | %.2f | %.1f | %s |" % (
                name, size, ("signal " + sig) if sig else code, cpu, wall, rss / 1024,
                "ok" if within else "OVER"))
    finally:
        shutil.rmtree(tmp)
    sys.exit(0 if ok else 1)


main()
