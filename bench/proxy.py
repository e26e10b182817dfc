#!/usr/bin/env python3
"""The allow-list proxy against a direct loopback connection (issue 15, docs/network.md).

Measured side by side in one run, in a private network and mount namespace (so the host's
interfaces and /etc/hosts stay untouched): a server on 198.51.100.7:8080, a test address on
the loopback of a second network namespace, "another host" joined by a veth pair (the proxy
refuses every address of the host it runs on, red team A13B-3), named `bench.test` by the
namespace's own /etc/hosts.

* time to first byte: from before connect() to the server's one-byte answer to a one-byte
  request. Direct: a connection from this process to 198.51.100.7:8080. Through the
  proxy: from inside `zpolicy run` (policy `allow: [bench.test:8080]`), a connection to
  the proxy on the sandbox's 127.0.0.1:3128, `CONNECT bench.test:8080`, its `200`, then
  the same request; so the figure holds the proxy's accept, its thread, its lookup of the
  name (the namespace's /etc/hosts), its admission and its connection to the server.
* throughput: one connection reading SIZE bytes the server sends as fast as it can.

The same client code runs on both sides (CLIENT below). Rounds alternate (direct,
proxied, direct, proxied, ...) so that drift in machine load hits both; figures are the
medians over all rounds. Needs root (unshare, ip, mount).

Usage: sudo bench/proxy.py [ZPOLICY] [ROUNDS] [SAMPLES_PER_ROUND] [SIZE_MIB]
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ADDRESS, PORT, NAME = "198.51.100.7", 8080, "bench.test"

CLIENT = r'''
import json, socket, sys, time
def first_byte(connect):
    t0 = time.perf_counter()
    s = connect()
    s.sendall(b"P")
    s.recv(1)
    t = time.perf_counter() - t0
    s.close()
    return t
def throughput(connect, size):
    s = connect()
    s.sendall(b"T")
    buf = bytearray(1 << 20)
    view, got = memoryview(buf), 0
    t0 = time.perf_counter()
    while got < size:
        n = s.recv_into(view)
        if n == 0:
            raise SystemExit("short read")
        got += n
    t = time.perf_counter() - t0
    s.close()
    return size / t
def via_proxy():
    s = socket.create_connection(("127.0.0.1", 3128))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(b"CONNECT bench.test:8080 HTTP/1.1\r\nHost: bench.test:8080\r\n\r\n")
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        c = s.recv(1)
        if not c:
            raise SystemExit("proxy closed: %r" % head)
        head += c
    if b" 200 " not in head.split(b"\r\n")[0]:
        raise SystemExit("proxy refused: %r" % head)
    return s
def direct():
    s = socket.create_connection(("198.51.100.7", 8080))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s
def measure(connect, samples, size):
    return {"ttfb": [first_byte(connect) for _ in range(samples)],
            "throughput": throughput(connect, size)}
'''


def listen():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((ADDRESS, PORT))
    listener.listen(128)
    return listener


def serve(listener, size):
    chunk = b"x" * (4 << 20)

    def handle(c):
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        what = c.recv(1)
        if what == b"P":
            c.sendall(b"p")
        elif what == b"T":
            left = size
            while left:
                n = min(left, len(chunk))
                c.sendall(chunk[:n] if n < len(chunk) else chunk)
                left -= n
        c.close()

    while True:
        c, _ = listener.accept()
        threading.Thread(target=handle, args=(c,), daemon=True).start()


def other_host(size):
    """Starts the server in a network namespace of its own, joined to this one by a veth
    pair: this host 192.0.2.2/24, the other 192.0.2.1/24 with ADDRESS on its loopback."""
    server = subprocess.Popen(["unshare", "-n", sys.executable, __file__, "--serve", str(size)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ours = os.readlink("/proc/self/ns/net")
    while os.readlink("/proc/%d/ns/net" % server.pid) == ours:
        time.sleep(0.01)
    pid = str(server.pid)
    for cmd in (["ip", "link", "add", "zph0", "type", "veth", "peer", "name", "zpo1", "netns", pid],
                ["ip", "addr", "add", "192.0.2.2/24", "dev", "zph0"],
                ["ip", "link", "set", "zph0", "up"],
                ["nsenter", "-t", pid, "-n", "sh", "-c",
                 "ip link set lo up && ip addr add %s/32 dev lo && ip addr add 192.0.2.1/24 dev zpo1"
                 " && ip link set zpo1 up" % ADDRESS],
                ["ip", "route", "add", ADDRESS + "/32", "via", "192.0.2.1"]):
        subprocess.check_call(cmd)
    server.stdin.write("go\n")
    server.stdin.flush()
    if server.stdout.readline() != "ready\n":
        sys.exit("the server on the other host did not start")
    return server


def main():
    if sys.argv[1:2] == ["--serve"]:
        sys.stdin.readline()
        listener = listen()
        print("ready", flush=True)
        serve(listener, int(sys.argv[2]))
    zpolicy = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/zpolicy")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    samples = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    size = (int(sys.argv[4]) if len(sys.argv) > 4 else 256) << 20
    if os.environ.get("ZPOLICY_BENCH_NS") != "1":
        os.execvpe("unshare", ["unshare", "-mn", sys.executable, *sys.argv],
                   dict(os.environ, ZPOLICY_BENCH_NS="1"))
    subprocess.check_call(["ip", "link", "set", "lo", "up"])
    with tempfile.TemporaryDirectory(prefix="zpolicy-bench-proxy-", dir="/var/tmp") as base:
        hosts = os.path.join(base, "hosts")
        with open(hosts, "w") as f:
            f.write("127.0.0.1 localhost\n%s %s\n" % (ADDRESS, NAME))
        subprocess.check_call(["mount", "--bind", hosts, "/etc/hosts"])
        ws = os.path.join(base, "ws")
        os.mkdir(ws)
        policy = os.path.join(base, "policy.yaml")
        with open(policy, "w") as f:
            f.write("zpolicy: 1\nmode: workspace-write\nnetwork:\n  allow: [\"%s:%d\"]\n" % (NAME, PORT))
        client = os.path.join(base, "client.py")
        with open(client, "w") as f:
            f.write(CLIENT + "print(json.dumps(measure(via_proxy, int(sys.argv[1]), int(sys.argv[2]))))\n")
        server = other_host(size)
        scope = {}
        exec(CLIENT, scope)
        direct, proxied = {"ttfb": [], "throughput": []}, {"ttfb": [], "throughput": []}
        for _ in range(rounds):
            d = scope["measure"](scope["direct"], samples, size)
            out = subprocess.run([zpolicy, "run", "--policy", policy, "--workspace", ws, "--",
                                  "/usr/bin/python3", client, str(samples), str(size)],
                                 cwd=ws, capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit("zpolicy run failed (%d): %s" % (out.returncode, out.stderr))
            p = json.loads(out.stdout)
            for into, got in ((direct, d), (proxied, p)):
                into["ttfb"] += got["ttfb"]
                into["throughput"].append(got["throughput"])
        server.kill()
        server.wait()

    def quantiles(v):
        v = sorted(v)
        return v[len(v) // 2] * 1e3, v[int(len(v) * 0.9)] * 1e3

    dm, d90 = quantiles(direct["ttfb"])
    pm, p90 = quantiles(proxied["ttfb"])
    dt = statistics.median(direct["throughput"]) / (1 << 20)
    pt = statistics.median(proxied["throughput"]) / (1 << 20)
    print("rounds %d, %d first-byte samples and one %d MiB read per side and round"
          % (rounds, samples, size >> 20))
    print("time to first byte, median (p90): direct %.3f ms (%.3f), through the proxy %.3f ms "
          "(%.3f); the proxy adds %.3f ms" % (dm, d90, pm, p90, pm - dm))
    print("throughput of one connection, median: direct %.0f MiB/s, through the proxy %.0f MiB/s "
          "(%.2f of direct)" % (dt, pt, pt / dt))
    print("load average: %s" % open("/proc/loadavg").read().split()[0])


main()
