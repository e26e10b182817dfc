#!/usr/bin/env python3
"""Hostile macOS artifacts under 1 MiB for `zpolicy verify` (issue 19 section 2).

    bench/sbpl_hostile.py GOLDEN_MACOS_DIR OUT_DIR

Writes OUT_DIR/NAME/{profile.sb,params.txt}, one directory per case: the golden profile
with a hostile tail appended (or replaced), each under 1 MiB. bench/sbpl_hostile.sh runs
`zpolicy verify` on each and reports time and peak memory.
"""
import os
import random
import sys

LIMIT = 1 << 20


def cases(profile, params):
    rnd = random.Random(19)
    room = LIMIT - len(profile) - 64

    def fill(unit, count_max=None):
        n = room // len(unit(99999))
        if count_max:
            n = min(n, count_max)
        return "".join(unit(i) for i in range(n))

    yield "nest-3000", profile + "(allow file-write* " + "(require-any " * 3000 + \
        '(subpath "/Users")' + ")" * 3001 + "\n", params
    deep = room // 14
    yield "nest-max", profile + "(allow file-write* " + "(require-any " * deep + \
        '(subpath "/Users")' + ")" * (deep + 1) + "\n", params
    # One rule, one list of distinct literals: the region set grows with every value.
    yield "literals", profile + "(deny file-write*\n" + fill(
        lambda i: '  (literal "/l%07d/x")\n' % i) + ")\n", params
    # A rule per subpath, each with a distinct path.
    yield "rules", profile + fill(lambda i: '(allow file-read* (subpath "/r%07d"))\n' % i), params
    # Allow rules the policy never asked for: every probe below them is a finding.
    yield "write-grants", profile + fill(
        lambda i: '(allow file-write* (subpath "/w%07d"))\n' % i), params
    # Rules on nested subpaths, 60 levels: each probe deep down matches hundreds of them.
    rules, size, i = [], 0, 0
    while True:
        r = '(allow file-read* (subpath "%s"))\n' % ("/n" * (1 + i % 60))
        if size + len(r) > room:
            break
        rules.append(r)
        size += len(r)
        i += 1
    yield "nested-rules", profile + "".join(rules), params
    # Rules no index settles: each is matched against every probe path.
    yield "require-not-rules", profile + fill(
        lambda i: '(deny file-write*(require-not(literal"/n%06d")))\n' % i), params

    # Paths of MAXPATHLEN bytes, each of two-byte components, distinct from the first
    # component on: nothing is shared between neighbours.
    def deep_path(i):
        head = "/d%05d" % i
        return head + "/a" * ((1023 - len(head)) // 2)
    yield "deep-paths", profile + fill(
        lambda i: '(deny file-write* (subpath "%s"))\n' % deep_path(i)), params
    yield "long-path", profile + '(deny file-write* (literal "/' + "a/" * (room // 2 - 8) + \
        'a"))\n', params
    # Parameters: many names, each read by a filter.
    n = room // 90
    extra = "".join("P%06d=/p/%06d/%s\n" % (i, i, "x" * rnd.randint(1, 20)) for i in range(n))
    yield "params", profile + "".join(
        '(allow file-read* (literal (param "P%06d")))\n' % i for i in range(n)), params + extra
    # Ports: every address filter names its own.
    yield "ports", profile + fill(
        lambda i: '(deny network-outbound (remote ip "*:%d"))\n' % (i % 65536), 60000), params


def main():
    golden, out = sys.argv[1], sys.argv[2]
    profile = open(os.path.join(golden, "profile.sb")).read()
    params = open(os.path.join(golden, "params.txt")).read()
    for name, text, par in cases(profile, params):
        assert len(text) < LIMIT and len(par) < LIMIT, name
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "profile.sb"), "w").write(text)
        open(os.path.join(d, "params.txt"), "w").write(par)
        print(name)


if __name__ == "__main__":
    main()
