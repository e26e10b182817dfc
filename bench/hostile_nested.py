#!/usr/bin/env python3
"""Issue 19 §2, session 19: bound bwrap argvs of about 1 MiB whose mounts are nested deep
in a real workspace tree (verify18's shape: 683 binds nested every second level of a
2 000-deep tree), and their relatives, each answered in under 2 s of CPU and 512 MiB.

Builds a workspace with a directory chain DEPTH levels deep, compiles the policy against
it (`compile --workspace`), adds the operations of each shape before `--chdir`, and runs
`zpolicy verify --workspace` under /usr/bin/time -v (with `ulimit -v 4000000` and
`timeout 60`). Prints a Markdown table (CPU seconds = user + system, the median of RUNS
runs; peak RSS) and exits 1 when a shape is over budget or killed. With SAVE, each
shape's stdout, stderr and exit status go to SAVE/NAME.{out,err,rc}, for comparing two
builds byte for byte (the workspace is made at the same path each time: pass WORK);
BYTES makes smaller inputs, which a slower build still answers. Then the same for
policies whose protected paths or deny roots are nested in that tree (`compile`, `check`
and `explain`, each with `--workspace`).

    [ONLY=REGEX] bench/hostile_nested.py [ZPOLICY] [RUNS] [SAVE] [WORK] [BYTES]
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
SAVE = sys.argv[3] if len(sys.argv) > 3 else None
WORK = sys.argv[4] if len(sys.argv) > 4 else None
BUDGET_S, BUDGET_KB = 2.0, 512 * 1024
MAX_INPUT = int(sys.argv[5]) if len(sys.argv) > 5 else 1 << 20
ONLY = os.environ.get("ONLY")  # a regular expression: only the shapes whose name it finds
# Counts of the shapes in two and three groups, so that each group fits in MAX_INPUT.
N2, N3, N4 = MAX_INPUT // 150, MAX_INPUT // 210, MAX_INPUT // 280
DEPTH = 2000

POLICY = ("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [%s]\n"
          "  write: [\"${WORKSPACE}\"]\n  protect: [.git]\nnetwork: none\n")
POLICY_NESTED = ("zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
                 "  write: [\"${WORKSPACE}\"]\n  %s:\n%snetwork: none\n")
# (name, key, the i-th path)
POLICIES = [
    ("protected paths deep/a.. nested every 2nd level", "protect", lambda i: "deep" + "/a" * (2 * i)),
    ("deny roots WS/deep/a.. nested every 2nd level", "deny",
     lambda i: "${WORKSPACE}/deep" + "/a" * (2 * i)),
]
# Read roots that are links on a merged-/usr host: the argv then holds --symlink, and the
# mount table links.
READ = {"": '"/"', "links": '"/usr", "/bin", "/lib", "/lib64", "/etc"'}


def make_chain(top, depth):
    """top/deep/a/a/... `depth` levels, made one level at a time (PATH_MAX is smaller)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for name in ["deep"] + ["a"] * depth:
        try:
            os.mkdir(name, dir_fd=fd)
        except FileExistsError:
            pass
        nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(fd)


def fill(base, make, budget):
    """The operations make(i) for i = 1, 2, ... while the argv stays under 1 MiB."""
    ops, size, i = [], len(base) + 1, 1
    while True:
        more = make(i)
        if more is None:
            return ops, i - 1
        add = sum(len(x) + 1 for x in more)
        if size + add >= budget:
            return ops, i - 1
        ops += more
        size += add
        i += 1


def shapes(ws):
    deep = ws + "/deep"

    def at(levels):
        return deep + "/a" * levels

    nested = lambda opt: lambda i: [opt, deep, at(2 * i)] if 2 * i < DEPTH else None
    alone = lambda opt: lambda i: [opt, at(2 * i)] if 2 * i < DEPTH else None
    return [
        ("--bind WS/deep nested every 2nd level (verify18)", nested("--bind")),
        ("links: --bind WS/deep nested every 2nd level", nested("--bind")),
        ("--ro-bind WS/deep nested every 2nd level", nested("--ro-bind")),
        ("--bind WS/deep nested every level", lambda i: ["--bind", deep, at(i)] if i < DEPTH else None),
        ("--tmpfs nested every 2nd level", alone("--tmpfs")),
        ("--dir nested every 2nd level", alone("--dir")),
        ("--symlink /etc nested every 2nd level", lambda i: ["--symlink", "/etc", at(2 * i)] if 2 * i < DEPTH else None),
        ("self --ro-bind nested every 2nd level", lambda i: ["--ro-bind", at(2 * i), at(2 * i)] if 2 * i < DEPTH else None),
        # Many aliases of one source, and a deep tree under the source.
        ("--ro-bind WS/deep/a.. 1 500 deep, then 20 000 x --ro-bind WS/deep WS/e<i>",
         lambda i: (["--ro-bind", at(1500), at(1500)] if i == 1 else
                    ["--ro-bind", deep, "%s/e%d" % (ws, i)])),
        # Many aliases of one source, and many mounts inside the source.
        ("%d x --ro-bind WS/deep WS/e<i>, as many binds inside WS/deep" % N2,
         lambda i: (["--ro-bind", deep, "%s/e%d" % (ws, i)] if i <= N2 else
                    ["--ro-bind", "/usr", "%s/c%d" % (deep, i)] if i <= 2 * N2 else None)),
        # Many aliases of one source, mounts inside one alias (each a place where the
        # aliases may change), and the same names inside the source.
        ("%d x --ro-bind WS/deep WS/e<i>, as many binds in WS/e1 and in WS/deep" % N3,
         lambda i: (["--ro-bind", deep, "%s/e%d" % (ws, i)] if i <= N3 else
                    ["--ro-bind", "/usr", "%s/e1/c%d" % (ws, i - N3)] if i <= 2 * N3 else
                    ["--ro-bind", "/usr", "%s/c%d" % (deep, i - 2 * N3)] if i <= 3 * N3 else None)),
        # Session 20: the same with the other kinds of bind, and mixtures.
        ("%d x --bind WS/deep WS/e<i>, as many binds in WS/e1 and in WS/deep" % N3,
         three(ws, "--bind", "--bind")),
        ("%d x --dev-bind-try WS/deep WS/e<i>, as many --bind-try in WS/e1 and in WS/deep" % N3,
         three(ws, "--dev-bind-try", "--bind-try")),
        ("%d x --ro-bind-try WS/deep WS/e<i>, as many --ro-bind-try in WS/e1 and in WS/deep" % N3,
         three(ws, "--ro-bind-try", "--ro-bind-try")),
        ("%d x --bind WS/deep WS/e<i>, --remount-ro of each, binds in WS/e1 and in WS/deep" % N4,
         lambda i: (["--bind", deep, "%s/e%d" % (ws, i)] if i <= N4 else
                    ["--remount-ro", "%s/e%d" % (ws, i - N4)] if i <= 2 * N4 else
                    ["--ro-bind", "/usr", "%s/e1/c%d" % (ws, i - 2 * N4)] if i <= 3 * N4 else
                    ["--ro-bind", "/usr", "%s/c%d" % (deep, i - 3 * N4)] if i <= 4 * N4 else None)),
        # Every alias with a mark at the same place (WS/deep/a), and mounts below it in one.
        ("%d x --bind WS/deep WS/e<i>, --chmod 0755 WS/e<i>/a, binds in WS/e1/a" % N3,
         lambda i: (["--bind", deep, "%s/e%d" % (ws, i)] if i <= N3 else
                    ["--chmod", "0755", "%s/e%d/a" % (ws, i - N3)] if i <= 2 * N3 else
                    ["--ro-bind", "/usr", "%s/e1/a/c%d" % (ws, i - 2 * N3)] if i <= 3 * N3 else None)),
        ("%d x --bind WS/deep WS/e<i>, as many --tmpfs in WS/e1 and --dir in WS/deep" % N3,
         lambda i: (["--bind", deep, "%s/e%d" % (ws, i)] if i <= N3 else
                    ["--tmpfs", "%s/e1/c%d" % (ws, i - N3)] if i <= 2 * N3 else
                    ["--dir", "%s/c%d" % (deep, i - 2 * N3)] if i <= 3 * N3 else None)),
        # Every alias with a bind mapping as it does at the same place (WS/deep/a), and
        # mounts below that place in one of them.
        ("%d x --ro-bind WS/deep WS/e<i>, --ro-bind WS/deep/a WS/e<i>/a, binds in WS/e1/a and WS/deep/a" % N4,
         lambda i: (["--ro-bind", deep, "%s/e%d" % (ws, i)] if i <= N4 else
                    ["--ro-bind", deep + "/a", "%s/e%d/a" % (ws, i - N4)] if i <= 2 * N4 else
                    ["--ro-bind", "/usr", "%s/e1/a/c%d" % (ws, i - 2 * N4)] if i <= 3 * N4 else
                    ["--ro-bind", "/usr", "%s/a/c%d" % (deep, i - 3 * N4)] if i <= 4 * N4 else None)),
        # A link in an alias: every host path is searched over every alias (the fallback).
        ("%d x --ro-bind WS/deep WS/e<i>, binds in WS/e1 and in WS/deep, a --symlink in WS/e2" % N3,
         lambda i: (["--symlink", "/etc", "%s/e2/l" % ws] if i == 1 else three(ws, "--ro-bind", "--ro-bind")(i - 1))),
        # The same with the aliases in the sandbox's /tmp and a link inside one of them:
        # a link at or below an alias bind's destination makes every path search every alias.
        ("%d x --ro-bind WS/deep /tmp/e<i>, binds in /tmp/e1 and in WS/deep, a --symlink in /tmp/e2" % N3,
         lambda i: (["--symlink", "/etc", "/tmp/e2/l"] if i == 1 else
                    ["--ro-bind", deep, "/tmp/e%d" % (i - 1)] if i <= N3 + 1 else
                    ["--ro-bind", "/usr", "/tmp/e1/c%d" % (i - 1 - N3)] if i <= 2 * N3 + 1 else
                    ["--ro-bind", "/usr", "%s/c%d" % (deep, i - 1 - 2 * N3)] if i <= 3 * N3 + 1 else None)),
    ]


def three(ws, alias, inner):
    """N3 x `alias` WS/deep WS/e<i>, N3 x `inner` /usr in WS/e1 and N3 more in WS/deep."""
    deep = ws + "/deep"
    return lambda i: ([alias, deep, "%s/e%d" % (ws, i)] if i <= N3 else
                      [inner, "/usr", "%s/e1/c%d" % (ws, i - N3)] if i <= 2 * N3 else
                      [inner, "/usr", "%s/c%d" % (deep, i - 2 * N3)] if i <= 3 * N3 else None)


def run(cmd, cwd, save):
    res = []
    for _ in range(RUNS):
        p = subprocess.run(["bash", "-c", 'ulimit -v 4000000; exec /usr/bin/time -v -o "$0" timeout 60 "$@"',
                            os.path.join(cwd, "time.txt")] + cmd,
                           cwd=cwd, capture_output=True)
        err = open(os.path.join(cwd, "time.txt")).read()
        user = float(re.search(r"User time \(seconds\): ([\d.]+)", err).group(1))
        sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", err).group(1))
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
        res.append((user + sys_, rss, p.returncode))
        if save:
            for ext, data in (("out", p.stdout), ("err", p.stderr), ("rc", b"%d\n" % p.returncode)):
                open(save + "." + ext, "wb").write(data)
    res.sort()
    return res[len(res) // 2]


def main():
    work = WORK or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)
    if SAVE:
        os.makedirs(SAVE, exist_ok=True)
    ws = os.path.join(work, "ws")
    os.makedirs(os.path.join(ws, ".git"), exist_ok=True)
    make_chain(ws, DEPTH)
    for kind, read in READ.items():
        open(os.path.join(work, "p%s.yaml" % kind), "w").write(POLICY % read)
        subprocess.run([ZP, "compile", "p%s.yaml" % kind, "--target", "linux", "--workspace", ws,
                        "--out", "golden" + kind], cwd=work, check=True, capture_output=True)
    ok = True
    print("| shape | ops | bytes | exit | CPU s | peak RSS MiB | budget |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for n, (name, make) in enumerate(shapes(ws)):
        if ONLY and not re.search(ONLY, name):
            continue
        kind = "links" if name.startswith("links:") else ""
        base = open(os.path.join(work, "golden%s/bwrap.args" % kind)).read().split("\n")
        at = base.index("--chdir")
        ops, count = fill("\n".join(base), make, MAX_INPUT)
        content = "\n".join(base[:at] + ops + base[at:])
        assert len(content) < MAX_INPUT
        out = os.path.join(work, "out%d" % n)
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(os.path.join(work, "golden" + kind), out)
        open(os.path.join(out, "bwrap.args"), "w").write(content)
        cmd = [ZP, "verify", "p%s.yaml" % kind, out, "--target", "linux", "--workspace", ws]
        cpu, rss, code = run(cmd, work, SAVE and os.path.join(SAVE, "shape%d" % n))
        within = cpu < BUDGET_S and rss < BUDGET_KB and code not in (124, 137) and code >= 0
        ok = ok and within
        print("| %s | %d | %d | %s | %.2f | %.1f | %s |" % (
            name, count, len(content), code, cpu, rss / 1024, "ok" if within else "OVER"))
    # Policies whose paths are nested in the same tree (session 20): each command that
    # resolves them walks every path's way on the host before the pin budget refuses them.
    for n, (name, key, make) in enumerate(POLICIES):
        if ONLY and not re.search(ONLY, name):
            continue
        lines, _ = fill(POLICY_NESTED, lambda i: ['    - "%s"' % make(i)] if 2 * i < DEPTH else None,
                        MAX_INPUT)
        entries = lines
        text = POLICY_NESTED % (key, "".join(e + "\n" for e in entries))
        assert len(text) < MAX_INPUT
        open(os.path.join(work, "nested%d.yaml" % n), "w").write(text)
        for verb, cmd in (("compile", ["compile", "nested%d.yaml" % n, "--target", "linux", "--out", "nout"]),
                          ("check", ["check", "nested%d.yaml" % n]),
                          ("explain", ["explain", "--policy", "nested%d.yaml" % n, ws + "/deep/a"])):
            shutil.rmtree(os.path.join(work, "nout"), ignore_errors=True)
            cpu, rss, code = run([ZP] + cmd + ["--workspace", ws], work,
                                 SAVE and os.path.join(SAVE, "policy%d-%s" % (n, verb)))
            within = cpu < BUDGET_S and rss < BUDGET_KB and code not in (124, 137) and code >= 0
            ok = ok and within
            print("| %s: `%s` | %d | %d | %s | %.2f | %.1f | %s |" % (
                name, verb, len(entries), len(text), code, cpu, rss / 1024, "ok" if within else "OVER"))
    if not WORK:
        # The tree is 2 000 directories deep, past shutil.rmtree's recursion limit.
        subprocess.run(["rm", "-rf", "--", work], check=True)
    sys.exit(0 if ok else 1)


main()
