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

Each row also gives "+ms", the median over runs of the time since the row above. The
guard's fork, its fork of bwrap's monitor and its exit are named from the scheduler's
events (guard_fork, monitor_fork, guard_exit).

Needs root and tracefs at /sys/kernel/tracing; adds and removes only its own "ovh"
uprobes. Run it under `chrt -f 50` on a loaded machine, as bench/run_overhead.py.

Environment: TIMELINE_NO_PROBES=1 puts no uprobe (scheduler events only: a uprobe gives
the binary's text a private copy, which changes what the guard's fork copies and faults
on); TIMELINE_SCHED="sched_switch sched_wakeup ..." enables more scheduler events;
TIMELINE_DUMP=PREFIX writes each run's trace to PREFIX.BINARY.ROUND. docs/benchmarks.md,
2026-12-06 08:15.

Usage: run_timeline.py N ZPOLICY [ZPOLICY...]
"""
import os, re, statistics, subprocess, sys, tempfile, time
FUNCS = {  # short name -> demangled prefix as nm -C prints it
    "prepare": "zpolicy::runner::prepare(",
    "preflight": "zpolicy::runner::preflight()",
    "host_facts": "zpolicy::compiler::host_facts(",
    "lint": "zpolicy::compiler::lint_policy(",
    "homes": "zpolicy::compiler::(anonymous namespace)::account_homes()",
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
    "run_with_status": "zpolicy::run_with_status(",
    "default_policy": "zpolicy::compiler::default_policy(",
    "judged_seen": "zpolicy::runner::mount_objects_seen(",
    "guard_child": "zpolicy::runner::(anonymous namespace)::guard(",
    "private_ns": "zpolicy::runner::enter_private_mount_namespace()",
    "stage": "zpolicy::runner::stage_bind_sources(",
    "exec_child": "zpolicy::runner::exec_child(",
    "moved": "zpolicy::runner::first_moved",
    "guard_table": "zpolicy::runner::mount_table_of(",
    "lints_again": "zpolicy::compiler::lints_refuse_on(",
    "mount_changed": "zpolicy::compiler::first_mount_changed",
    "blocked": "zpolicy::runner::(anonymous namespace)::wait_until_blocked(",
    "sandbox_table": "zpolicy::runner::SetupCheck::mounts(",
    "unverified": "zpolicy::compiler::unverified_mounts(",
    "relayed": "zpolicy::runner::relayed_status(",
    "hint": "zpolicy::runner::explain_hint",
    "kill_init": "zpolicy::runner::(anonymous namespace)::kill_named_init(",
    "kill_children": "zpolicy::runner::(anonymous namespace)::kill_children(",
    "place": "zpolicy::runner::place_descriptors(",
    "let_go": "zpolicy::runner::(anonymous namespace)::wait_to_be_let_go(",
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
        if os.environ.get("TIMELINE_NO_PROBES"): break
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
    if made: w(I + "/events/ovh/enable", "1")
    for e in ("sched_process_exec", "sched_process_exit", "sched_process_fork") + tuple(os.environ.get("TIMELINE_SCHED", "").split()):
        w(I + f"/events/sched/{e}/enable", "1")
    res = {b: {} for b in bins}
    runs = {b: [] for b in bins}
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
                if os.environ.get("TIMELINE_DUMP"):
                    open(f"{os.environ['TIMELINE_DUMP']}.{bi}.{i}", "w").write(tr)
                left = bool(os.listdir(ws))
                if left:
                    subprocess.run(["rm", "-rf"] + [os.path.join(ws, e) for e in os.listdir(ws)], check=True)
                if i < 2: continue
                t0 = None; seen = {}
                # The guard is the process whose child execs bwrap: its fork and the
                # fork of that child are named, as is its exit.
                forks = {int(c): int(pp) for pp, c in re.findall(r"sched_process_fork: comm=\S+ pid=(\d+) child_comm=\S+ child_pid=(\d+)", tr)}
                execs = re.findall(r"sched_process_exec: filename=/usr/bin/bwrap pid=(\d+)", tr)
                monitor = int(execs[0]) if execs else None
                guard = forks.get(monitor)
                for line in tr.splitlines():
                    m = re.search(r"\s(\d+\.\d+): (\S+): (.*)", line)
                    if not m: continue
                    t, ev, a = float(m.group(1)) * 1000, m.group(2), m.group(3)
                    if ev == "sched_process_exec" and b in a and t0 is None: t0 = t; continue
                    if ev == "sched_process_exec" and "bwrap" in a: ev = "bwrap_exec"
                    elif ev == "sched_process_exec" and "/true" in a: ev = "true_exec"
                    elif ev == "sched_process_exit" and "comm=true" in a: ev = "true_exit"
                    elif ev == "sched_process_exit" and "comm=bwrap" in a: ev = "bwrap_exit"
                    elif ev == "sched_process_exit" and guard and f" pid={guard} " in a: ev = "guard_exit"
                    elif ev == "sched_process_exit" and os.path.basename(b)[:15] in a: ev = "zp_exit"
                    elif ev == "sched_process_fork" and guard and f"child_pid={guard} " in a + " ": ev = "guard_fork"
                    elif ev == "sched_process_fork" and monitor and f"child_pid={monitor} " in a + " ": ev = "monitor_fork"
                    elif ev.startswith("sched"): continue
                    else: ev = ev.split("_", 1)[1]
                    if t0 is None: continue
                    seen.setdefault(ev, []).append(t - t0)
                run = {ev: max(ts) if ev.endswith("exit") or ev.endswith("_ret") else min(ts)
                       for ev, ts in seen.items()}
                for ev, at in run.items(): res[b].setdefault(ev, []).append(at)
                runs[b].append(run)
    # "+ms": the median over runs of the time since the row above, steadier under load
    # than the difference of the two medians.
    for b in bins:
        print(os.path.basename(b))
        rows = sorted(res[b].items(), key=lambda kv: statistics.median(kv[1]))
        prev = None
        for ev, v in rows:
            d = [r[ev] - r[prev] for r in runs[b] if prev and ev in r and prev in r]
            step = f"{statistics.median(d):+6.2f}" if d else " " * 6
            print(f"  {ev:18s} at {statistics.median(v):7.2f} ms {step}  ({len(v)} runs)")
            prev = ev
finally:
    try: w(I + "/tracing_on", "0")
    except OSError: pass
    if os.path.isdir(I): os.rmdir(I)
    for name in made:
        w(T + "/uprobe_events", f"-:ovh/{name}\n", "a")
