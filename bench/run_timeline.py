#!/usr/bin/env python3
"""Where the time of `zpolicy run -- true` goes, step by step, in release binaries as built.

Uprobes (tracefs) on the entry and return of the runner's and the pipeline's steps
(FUNCS, found by `nm -C`; a step a binary lacks is skipped), plus the exec and exit of
zpolicy, bwrap and `true`, in a tracefs instance of its own. Each event's time is taken
from zpolicy's exec: an entry's first occurrence, a return's or an exit's last. Binaries
run interleaved in one empty /var/tmp workspace (stdin and stdout /dev/null), 2 warm-up
rounds; prints each binary's medians in time order. docs/benchmarks.md, 2026-12-05 14:50.
A run that found another run live on the host leaves its placeholders (the script removes
them) and skips their removal: kept, so on a busy host the cleanup reads a little short.

Needs root and tracefs at /sys/kernel/tracing; adds and removes only its own "ovh"
uprobes. Run it under `chrt -f 50` on a loaded machine, as bench/run_overhead.py.

Usage: run_timeline.py N ZPOLICY [ZPOLICY...]
"""
import os, re, statistics, subprocess, sys, tempfile, time
FUNCS = {  # short name -> demangled prefix as nm -C prints it
    "prepare": "zpolicy::runner::prepare(",
    "preflight": "zpolicy::runner::preflight()",
    "host_facts": "zpolicy::compiler::host_facts(",
    "lint": "zpolicy::compiler::lint_policy(",
    "homes": "zpolicy::compiler::read_account_homes()",
    "compile": "zpolicy::compiler::compile(",
    "plan": "zpolicy::compiler::plan_confined(",
    "exec_bwrap": "zpolicy::runner::(anonymous namespace)::execute_bwrap(",
    "guard": "zpolicy::runner::start_guard(",
    "supervise": "zpolicy::runner::supervise(",
    "notify": "zpolicy::runner::limit_sandbox_notify(",
    "setup": "zpolicy::runner::SetupCheck::check(",
    "cleanup": "zpolicy::runner::Placeholders::cleanup(",
    "cmd_run": "zpolicy::cli::cmd_run(",
    "parse_opts": "zpolicy::cli::parse_run_options(",
    "ph_prepare": "zpolicy::runner::Placeholders::prepare(",
    "durable": "zpolicy::runner::Placeholders::records_durable(",
    "sources": "zpolicy::runner::BindSources::open(",
    "watch": "zpolicy::runner::HostNameWatch::start(",
    "streams": "zpolicy::runner::StandardStreams::prepare(",
    "share": "zpolicy::runner::sandbox_notify_share(",
    "emit": "zpolicy::compiler::emit_artifacts(",
    "verify": "zpolicy::compiler::verify_linux_part(",
    "await": "zpolicy::compiler::await_filter_proof(",
    "startproof": "zpolicy::compiler::start_filter_proof(zpolicy::compiler::RunPlan&)",
}
T = "/sys/kernel/tracing"
I = T + "/instances/ovh-probe"
def w(p, v, mode="w"):
    fd = os.open(p, os.O_WRONLY | (os.O_APPEND if mode == "a" else os.O_TRUNC))
    try: os.write(fd, v.encode())
    finally: os.close(fd)
bins = [os.path.abspath(b) for b in sys.argv[2:]]
n = int(sys.argv[1])
made = []
try:
    for bi, b in enumerate(bins):
        syms = subprocess.check_output(["nm", "-C", b], text=True).splitlines()
        for short, pre in FUNCS.items():
            hits = [l for l in syms if l[19:].startswith(pre) and "[clone" not in l]
            if not hits: continue
            addr = int(hits[0][:16], 16)
            for kind, suf in (("p", ""), ("r", "_ret")):
                name = f"b{bi}_{short}{suf}"
                w(T + "/uprobe_events", f"{kind}:ovh/{name} {b}:0x{addr:x}\n", "a")
                made.append(name)
    os.makedirs(I, exist_ok=True)
    w(I + "/buffer_size_kb", "4096")
    w(I + "/events/ovh/enable", "1")
    for e in ("sched_process_exec", "sched_process_exit"):
        w(I + f"/events/sched/{e}/enable", "1")
    res = {b: {} for b in bins}
    with tempfile.TemporaryDirectory(prefix="zp-probe-", dir="/var/tmp") as base:
        ws = os.path.join(base, "ws"); os.mkdir(ws)
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TERM", "USER")}
        q = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL}
        for i in range(n + 2):
            for bi, b in enumerate(bins):
                w(I + "/trace", "")
                w(I + "/tracing_on", "1")
                subprocess.run([b, "run", "--", "true"], cwd=ws, env=env, check=True, **q)
                w(I + "/tracing_on", "0")
                tr = open(I + "/trace").read()
                left = bool(os.listdir(ws))
                if left:
                    subprocess.run(["rm", "-rf"] + [os.path.join(ws, e) for e in os.listdir(ws)], check=True)
                if i < 2: continue
                t0 = None; seen = {}
                for line in tr.splitlines():
                    m = re.search(r"\s(\d+\.\d+): (\S+): (.*)", line)
                    if not m: continue
                    t, ev, a = float(m.group(1)) * 1000, m.group(2), m.group(3)
                    if ev == "sched_process_exec" and b in a and t0 is None: t0 = t; continue
                    if ev == "sched_process_exec" and "bwrap" in a: ev = "bwrap_exec"
                    elif ev == "sched_process_exec" and "/true" in a: ev = "true_exec"
                    elif ev == "sched_process_exit" and "comm=true" in a: ev = "true_exit"
                    elif ev == "sched_process_exit" and "comm=bwrap" in a: ev = "bwrap_exit"
                    elif ev == "sched_process_exit" and os.path.basename(b)[:15] in a: ev = "zp_exit"
                    elif ev.startswith("sched"): continue
                    else: ev = ev.split("_", 1)[1]
                    if t0 is None: continue
                    seen.setdefault(ev, []).append(t - t0)
                for ev, ts in seen.items():
                    res[b].setdefault(ev, []).append(max(ts) if ev.endswith("exit") or ev.endswith("_ret") else min(ts))
    for b in bins:
        print(os.path.basename(b))
        rows = sorted(res[b].items(), key=lambda kv: statistics.median(kv[1]))
        for ev, v in rows:
            print(f"  {ev:16s} at {statistics.median(v):7.2f} ms  ({len(v)} runs)")
finally:
    try: w(I + "/tracing_on", "0")
    except OSError: pass
    if os.path.isdir(I): os.rmdir(I)
    for name in made:
        w(T + "/uprobe_events", f"-:ovh/{name}\n", "a")
