#!/usr/bin/env python3
"""The plan JSON that `zpolicy plan --format json` emits is valid against the schema
installed with the package (docs/plan.schema.json), and the schema is not vacuous: plans
with a key missing or added, another format version, or bytes that are not base64 fail it.
A plan under an allow list describes the proxy an executor must serve (network_proxy).

usage: plan_schema_test.py ZPOLICY SCHEMA
Exits 77 (a skip for ctest) when python3's jsonschema is not installed
(scripts/install-deps.sh installs python3-jsonschema)."""
import base64
import copy
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("plan_schema_test: python3 jsonschema is not installed; skipped", file=sys.stderr)
    sys.exit(77)

zpolicy, schema_path = os.path.abspath(sys.argv[1]), sys.argv[2]
with open(schema_path, encoding="utf-8") as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
failures = []


def plan(cwd, *options):
    r = subprocess.run([zpolicy, "plan", "--format", "json", *options, "--", "/bin/true"],
                       cwd=cwd, capture_output=True)
    return r.returncode, r.stdout, r.stderr


def check_valid(name, document):
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    for e in errors:
        failures.append(f"{name}: {'/'.join(map(str, e.path))}: {e.message}")


def check_invalid(name, document):
    if validator.is_valid(document):
        failures.append(f"{name}: the schema accepts it")


with tempfile.TemporaryDirectory() as tmp:
    # A workspace whose name is not UTF-8, so that the plan carries {"base64": ...} paths.
    ws = os.path.join(os.fsencode(tmp), b"ws\xff")
    os.mkdir(ws)
    os.mkdir(os.path.join(ws, b".git"))
    with open(os.path.join(tmp, "danger.yaml"), "w") as f:
        f.write("zpolicy: 1\nmode: danger-full-access\n")
    with open(os.path.join(tmp, "timed.yaml"), "w") as f:
        f.write("zpolicy: 1\nmode: workspace-write\nprocess:\n  timeout: 90s\n")
    with open(os.path.join(tmp, "allow.yaml"), "w") as f:
        f.write("zpolicy: 1\nmode: workspace-write\nnetwork:\n"
                "  allow: [pypi.org, \"*.pythonhosted.org:443\", \"localhost:5432\"]\n")

    plans = {}
    rc, out, err = plan(ws, "--policy", os.path.join(tmp, "danger.yaml"))
    if rc != 0:
        failures.append(f"unconfined plan: exit {rc}: {err.decode(errors='replace')}")
    else:
        plans["unconfined"] = json.loads(out)
    for name, options in (("bwrap", ()), ("bwrap with a timeout", ("--policy", os.path.join(tmp, "timed.yaml"))),
                          ("bwrap with a proxy", ("--policy", os.path.join(tmp, "allow.yaml")))):
        rc, out, err = plan(ws, *options)
        if rc == 4:  # no usable bwrap on this host: the Linux plans cannot be made here
            print(f"plan_schema_test: {name}: no sandbox backend here; not checked", file=sys.stderr)
            continue
        if rc != 0:
            failures.append(f"{name} plan: exit {rc}: {err.decode(errors='replace')}")
            continue
        plans[name] = json.loads(out)

    for name, document in plans.items():
        check_valid(name, document)
    if "bwrap" in plans:
        p = plans["bwrap"]
        if not isinstance(p["cwd"], dict) or not p["placeholders"] or not p["fds"]:
            failures.append("bwrap plan: expected a base64 cwd, placeholders and the filter's fd")
        timed = plans.get("bwrap with a timeout")
        if timed and (timed["timeout_ms"], timed["timeout_grace_ms"]) != (90000, 2000):
            failures.append(f"timed plan: timeout_ms {timed['timeout_ms']}, "
                            f"timeout_grace_ms {timed['timeout_grace_ms']}")
        share = p["notify_share"]
        if not share or min(share.values()) < 1 or len(share) != 4:
            failures.append(f"bwrap plan: no inotify and fanotify share: {share}")
        if p["private_mounts"] is not True:
            failures.append(f"bwrap plan: private_mounts {p['private_mounts']}")
        watched = [(w["name"], w["on"]) for w in p["watches"]]
        if (".git", "replaced") not in watched:
            failures.append(f"bwrap plan: the protected .git is not watched: {watched}")
        if p["network_proxy"] is not None:
            failures.append(f"bwrap plan under network none: network_proxy {p['network_proxy']}")
        proxied = plans.get("bwrap with a proxy")
        expected = {"port": 3128, "allow": ["*.pythonhosted.org:443", "localhost:5432", "pypi.org:443",
                                            "pypi.org:80"], "forwards": [5432]}
        if proxied and dict(proxied["network_proxy"], allow=sorted(proxied["network_proxy"]["allow"])) != expected:
            failures.append(f"proxied plan: network_proxy {proxied['network_proxy']}, expected {expected}")
        if proxied and "HTTPS_PROXY=http://127.0.0.1:3128" not in proxied["env"]:
            failures.append("proxied plan: HTTPS_PROXY does not name the proxy's port")
        # bwrap starts with no environment (red team R7-E1); the command's is in the
        # --args descriptor, read at the start, and is exactly env.
        for name in ("bwrap", "bwrap with a proxy"):
            q = plans.get(name)
            if not q:
                continue
            if q["exe_env"] != []:
                failures.append(f"{name} plan: exe_env {q['exe_env']}, expected none")
            env_fds = [f for f in q["fds"] if f["artifact"] == "environment"]
            if len(env_fds) != 1 or env_fds[0]["when"] != "start" or \
                    q["argv"][q["argv"].index("--") - 2:q["argv"].index("--")] != ["--args", str(env_fds[0]["fd"])]:
                failures.append(f"{name} plan: no environment descriptor read by --args at the start")
                continue
            words = base64.b64decode(env_fds[0]["content"]["base64"]).split(b"\0")
            expected_words = [b"--clearenv"]
            for e in q["env"]:
                e = base64.b64decode(e["base64"]) if isinstance(e, dict) else e.encode()
                name_, value = e.split(b"=", 1)
                expected_words += [b"--setenv", name_, value]
            if words != expected_words + [b""]:
                failures.append(f"{name} plan: the environment descriptor is not env: {words}")
        unconfined = plans.get("unconfined")
        if unconfined and unconfined["exe_env"] != unconfined["env"]:
            failures.append("unconfined plan: exe_env is not the command's env")

    # The schema refuses what an executor must refuse.
    base = plans.get("bwrap") or plans.get("unconfined")
    if base:
        def mutated(change):
            d = copy.deepcopy(base)
            change(d)
            return d
        check_invalid("format version 1", mutated(lambda d: d.update(zpolicy_plan=1)))
        check_invalid("format version 2", mutated(lambda d: d.update(zpolicy_plan=2)))
        check_invalid("format version 3", mutated(lambda d: d.update(zpolicy_plan=3)))
        check_invalid("format version 4", mutated(lambda d: d.update(zpolicy_plan=4)))
        check_invalid("format version 5", mutated(lambda d: d.update(zpolicy_plan=5)))
        check_invalid("format version 6", mutated(lambda d: d.update(zpolicy_plan=6)))
        check_invalid("format version 8", mutated(lambda d: d.update(zpolicy_plan=8)))
        check_invalid("no private_mounts", mutated(lambda d: d.pop("private_mounts")))
        check_invalid("private_mounts as text", mutated(lambda d: d.update(private_mounts="yes")))
        check_invalid("no notify_share", mutated(lambda d: d.pop("notify_share")))
        share = {"inotify_instances": 32, "inotify_watches": 8, "fanotify_groups": 32, "fanotify_marks": 8}
        check_valid("a notify share", mutated(lambda d: d.update(notify_share=share)))
        check_invalid("an inotify share of none", mutated(lambda d: d.update(notify_share={**share, "inotify_instances": 0})))
        check_invalid("a share without fanotify", mutated(lambda d: d.update(notify_share={"inotify_instances": 32, "inotify_watches": 8})))
        check_invalid("no watches", mutated(lambda d: d.pop("watches")))
        check_invalid("no missing_deny_roots", mutated(lambda d: d.pop("missing_deny_roots")))
        check_valid("a missing deny root", mutated(lambda d: d.update(missing_deny_roots=["/h/.aws"])))
        check_invalid("a relative missing deny root", mutated(lambda d: d.update(missing_deny_roots=[".aws"])))
        watch = {"directory": "/w", "name": ".env", "protects": "/w/.env", "on": "replaced"}
        check_valid("a watch", mutated(lambda d: d.update(watches=[watch])))
        check_invalid("a watch of an unknown kind", mutated(lambda d: d.update(watches=[{**watch, "on": "modified"}])))
        check_invalid("a watched name with a slash", mutated(lambda d: d.update(watches=[{**watch, "name": "a/b"}])))
        check_invalid("a watched relative directory", mutated(lambda d: d.update(watches=[{**watch, "directory": "w"}])))
        check_invalid("no network_proxy", mutated(lambda d: d.pop("network_proxy")))
        proxy = {"port": 3128, "allow": ["pypi.org:443"], "forwards": []}
        check_valid("a proxy", mutated(lambda d: d.update(network_proxy=proxy)))
        check_invalid("a proxy on port 0", mutated(lambda d: d.update(network_proxy={**proxy, "port": 0})))
        check_invalid("a proxy admitting nothing", mutated(lambda d: d.update(network_proxy={**proxy, "allow": []})))
        check_invalid("a proxy entry with a scheme", mutated(
            lambda d: d.update(network_proxy={**proxy, "allow": ["https://pypi.org:443"]})))
        # The entries' pattern is the allow-list grammar (docs/network.md), read here by
        # python's re as an executor's validator reads it; the unit suite
        # plan_schema_allow_pattern holds it to ir::parse_destination entry by entry.
        check_valid("a proxy admitting every kind of entry", mutated(lambda d: d.update(network_proxy={
            **proxy, "allow": ["*.pythonhosted.org:80", "github.com:22", "ip:192.0.2.10:443",
                               "ip:[2001:db8::1]:443", "ip:[::ffff:192.0.2.1]:8080", "localhost:5432"]})))
        for entry in ("pypi..org:443", "pypi.org:0", "pypi.org:65536", "pypi.org", "127.1:80",
                      "-pypi.org:443", "ip:[1::2::3]:443", "ip:10.0.0.01:443", "*.*.org:443"):
            check_invalid(f"a proxy entry {entry}", mutated(
                lambda d, entry=entry: d.update(network_proxy={**proxy, "allow": [entry]})))
        check_invalid("a proxy without forwards", mutated(
            lambda d: d.update(network_proxy={"port": 3128, "allow": ["pypi.org:443"]})))
        check_invalid("no env", mutated(lambda d: d.pop("env")))
        check_invalid("no exe_env", mutated(lambda d: d.pop("exe_env")))
        check_invalid("a plan fd without its hand-over time", mutated(lambda d: d["fds"].append(
            {"fd": 9, "artifact": "environment", "content": {"base64": ""}})))
        check_invalid("a plan fd handed over at another time", mutated(lambda d: d["fds"].append(
            {"fd": 9, "artifact": "environment", "when": "later", "content": {"base64": ""}})))
        check_invalid("an unknown key", mutated(lambda d: d.update(network="open")))
        check_invalid("an unknown backend", mutated(lambda d: d.update(backend="docker")))
        check_invalid("a relative exe", mutated(lambda d: d.update(exe="bwrap")))
        check_invalid("stdin as a plan fd", mutated(lambda d: d["fds"].append(
            {"fd": 0, "artifact": "seccomp.bpf", "when": "release", "content": {"base64": ""}})))
        check_invalid("content that is not base64", mutated(lambda d: d["fds"].append(
            {"fd": 3, "artifact": "seccomp.bpf", "when": "release", "content": {"base64": "not base64!"}})))
        check_invalid("an empty argv", mutated(lambda d: d.update(argv=[])))

if not plans:
    failures.append("no plan was made at all")
for f in failures:
    print("plan_schema_test: " + f, file=sys.stderr)
print(f"plan_schema_test: {len(plans)} plans checked ({', '.join(plans)})")
sys.exit(1 if failures else 0)
