#!/usr/bin/env python3
"""Writes a policy with N protected subpaths and N/10 deny roots (issue 18's budget:
N = 20 000 compiles for both targets in under 2 s; 10x the input costs at most 15x the
time). Usage: scale_policy.py N OUT.yaml"""
import sys

n = int(sys.argv[1])
lines = ["zpolicy: 1", "mode: workspace-write", "filesystem:", '  read: ["/"]',
         '  write: ["${WORKSPACE}", "${TMPDIR}"]', "  protect:"]
# Spread over directories so that the paths share prefixes the way real trees do.
lines += [f"    - d{i // 100:03d}/p{i:05d}" for i in range(n)]
lines += ["  deny:"] + [f'    - "${{HOME}}/secret/s{i:05d}"' for i in range(n // 10)]
open(sys.argv[2], "w").write("\n".join(lines) + "\nnetwork: none\n")
