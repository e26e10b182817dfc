#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"
#include "two_hosts.hpp"

// `network: {allow: ...}` end to end (docs/network.md): real HTTP servers on another host
// and on this one (on_two_hosts: private network and mount namespaces of the test, so the
// host's interfaces and /etc/hosts stay untouched; the proxy resolves through the test's
// /etc/hosts). curl inside the sandbox goes through the proxy variables; every refused
// destination's server must have received nothing, and the refusals are reported.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// argv: HITS SECONDS READY SPEC...; appends one line per request or datagram to HITS and
// makes READY once every SPEC listens. SPEC: http:ADDRESS:PORT serves HTTP; dns:ADDRESS
// counts TCP and UDP on port 53; raw:PORT listens on [::]:PORT (IPv4 too) as a service of
// this host alone and records each connection it accepts, then each request it is sent
// (transparent, IPV6_TRANSPARENT: it answers from an address that only a policy rule's
// table makes local).
const char* kServers = R"PY(import socket, sys, threading, time, http.server
hits_path, seconds, ready = sys.argv[1], float(sys.argv[2]), sys.argv[3]
lock = threading.Lock()
def hit(what):
    with lock, open(hits_path, "a") as f:
        f.write(what + "\n")
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        hit("HTTP %s:%d %s" % (self.server.server_address[0], self.server.server_address[1], self.path))
        b = b"hello from %s\n" % self.server.server_address[0].encode()
        self.send_response(200); self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def log_message(self, *a): pass
class Server6(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
def dns_udp(s):
    while True:
        s.recvfrom(512); hit("DNS udp")
def dns_tcp(s):
    while True:
        s.accept(); hit("DNS tcp")
def raw(s):
    while True:
        c, _ = s.accept(); c.settimeout(2); hit("ACCEPT %s" % c.getsockname()[0])
        try:
            if c.recv(4096):
                hit("REQUEST %s" % c.getsockname()[0])
                c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 18\r\n\r\nhost-only-service\n")
        except OSError: pass
        c.close()
for spec in sys.argv[4:]:
    kind, _, rest = spec.partition(":")
    if kind == "http":
        addr, _, port = rest.rpartition(":")
        server = (Server6 if ":" in addr else http.server.ThreadingHTTPServer)((addr, int(port)), H)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    elif kind == "dns":
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind((rest, 53))
        t = socket.socket(); t.bind((rest, 53)); t.listen()
        threading.Thread(target=dns_udp, args=(u,), daemon=True).start()
        threading.Thread(target=dns_tcp, args=(t,), daemon=True).start()
    else:
        s = socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.IPPROTO_IPV6, 75, 1)  # IPV6_TRANSPARENT
        s.bind(("::", int(rest))); s.listen()
        threading.Thread(target=raw, args=(s,), daemon=True).start()
open(ready, "w").close()
time.sleep(seconds)
)PY";

const char* kHosts = R"HOSTS(127.0.0.1 localhost
198.51.100.7 allowed.test other.test
127.0.0.1 rebind-loop.test
10.0.0.7 rebind-private.test
169.254.169.254 metadata.test
)HOSTS";

const char* kAllowPolicy = R"YAML(zpolicy: 1
mode: workspace-write
network:
  allow:
    - allowed.test:8080
    - rebind-loop.test:8080
    - rebind-private.test:8080
    - metadata.test:8080
    - localhost:5432
)YAML";

// Inside the sandbox: each case prints its name and curl's HTTP status (000: no answer).
const char* kClient = R"SH(code() { curl -s -m 5 -o /dev/null -w "%{http_code}" "$@"; }
echo "plain $(curl -s -m 5 http://allowed.test:8080/plain)"
echo "connect $(curl -s -m 5 -p http://allowed.test:8080/tunnel)"
echo "other-port $(code http://allowed.test:9090/other-port)"
echo "not-listed $(code http://other.test:8080/not-listed)"
echo "ip-literal $(code http://198.51.100.7:8080/ip-literal)"
echo "connect-ip-literal $(code -p http://198.51.100.7:8080/connect-ip-literal)"
echo "rebind-loop $(code http://rebind-loop.test:8080/rebind-loop)"
echo "rebind-private $(code http://rebind-private.test:8080/rebind-private)"
echo "metadata $(code http://metadata.test:8080/metadata)"
echo "direct $(code --noproxy '*' http://198.51.100.7:8080/direct)"
echo "forward $(curl -s -m 5 http://127.0.0.1:5432/forward)"
echo "unforwarded $(code --noproxy '*' http://127.0.0.1:8080/unforwarded)"
python3 -c '
import socket
for t, name in ((socket.SOCK_DGRAM, "udp"), (socket.SOCK_STREAM, "tcp")):
    try:
        s = socket.socket(socket.AF_INET, t); s.settimeout(2)
        s.connect(("198.51.100.7", 53)); s.send(b"q"); print("dns-" + name, "sent")
    except OSError as e:
        print("dns-" + name, "refused", e.errno)
'
echo "proxy $HTTP_PROXY $https_proxy $ALL_PROXY $NO_PROXY"
)SH";

// Inside the sandbox, one process for many requests (a curl each costs a start-up): argv
// holds URLs; each is asked of the proxy in absolute form, and its last path component,
// the answer's status (000: none) and body are printed on one line.
const char* kPlainClient = R"PY(import os, socket, sys
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
for url in sys.argv[1].split():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (url, url.split("/")[2])).encode())
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status = head.split(b" ")[1].decode() if head else "000"
    shown = body.decode().strip() if status == "200" else ""
    print(" ".join(w for w in (url.rsplit("/", 1)[1], status, shown) if w))
)PY";

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text + "\n").find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_network_allow)

BOOST_DATA_TEST_CASE(only_listed_names_on_public_addresses_get_through_the_proxy,
                     bdata::make(kCallers), caller) {
  Sandbox sb(caller);
  const std::string servers = sb.base() + "/servers.py", hosts = sb.base() + "/hosts",
                    hits = sb.base() + "/hits";
  sb.write_file(servers, kServers);
  sb.write_file(hosts, kHosts);
  const std::string policy = sb.write_policy("allow.yaml", kAllowPolicy);
  RunSpec spec;
  const std::string status = sb.home() + "/status.json";
  spec.options = {"--policy", policy, "--status-file", status};
  spec.command = {"bash", "-c", kClient};
  // The public servers on another host; the loopback ones (one behind localhost:5432) here.
  const std::string py = "/usr/bin/python3 " + servers + " " + hits + " 60 ";
  spec.root_prefix = on_two_hosts(
      {.hosts_file = hosts,
       .other_addresses = {"198.51.100.7", "10.0.0.7", "169.254.169.254"},
       .on_other_host = py + hits +
                        ".other http:198.51.100.7:8080 http:198.51.100.7:9090 "
                        "http:10.0.0.7:8080 http:169.254.169.254:8080 dns:198.51.100.7",
       .on_this_host = py + hits + ".this http:127.0.0.1:8080 http:127.0.0.1:5432",
       .ready_files = {hits + ".other", hits + ".this"}});
  const RunResult r = sb.run(spec);
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.describe());
  const std::string& out = r.out;
  BOOST_TEST(has_line(out, "plain hello from 198.51.100.7"), r.describe());
  BOOST_TEST(has_line(out, "connect hello from 198.51.100.7"), r.describe());
  for (const char* refused : {"other-port", "not-listed", "ip-literal", "rebind-loop",
                              "rebind-private", "metadata"})
    BOOST_TEST(has_line(out, std::string(refused) + " 403"), refused << "\n" << r.describe());
  BOOST_TEST(has_line(out, "connect-ip-literal 000"), r.describe());  // CONNECT refused: 403, no tunnel
  BOOST_TEST(has_line(out, "direct 000"), r.describe());
  BOOST_TEST(has_line(out, "unforwarded 000"), r.describe());
  BOOST_TEST(has_line(out, "forward hello from 127.0.0.1"), r.describe());
  BOOST_TEST(has_line(out, "dns-udp refused 101"), r.describe());
  BOOST_TEST(has_line(out, "dns-tcp refused 101"), r.describe());
  BOOST_TEST(has_line(out, "proxy http://127.0.0.1:3128 http://127.0.0.1:3128 "
                           "http://127.0.0.1:3128 localhost,127.0.0.1,::1"),
             r.describe());
  // The servers behind every refused destination received nothing.
  const std::string got = read_file(hits).value_or("");
  BOOST_TEST(got == "HTTP 198.51.100.7:8080 /plain\nHTTP 198.51.100.7:8080 /tunnel\n"
                    "HTTP 127.0.0.1:5432 /forward\n");
  // Each refusal once on stderr, with its reason.
  for (const char* line :
       {"zpolicy: network: refused allowed.test:9090 (port-not-listed)",
        "zpolicy: network: refused other.test:8080 (not-listed)",
        "zpolicy: network: refused 198.51.100.7:8080 (not-listed)",
        "zpolicy: network: refused rebind-loop.test:8080 (address-refused)",
        "zpolicy: network: refused rebind-private.test:8080 (address-refused)",
        "zpolicy: network: refused metadata.test:8080 (address-refused)"}) {
    const size_t at = r.err.find(line);
    BOOST_TEST((at != std::string::npos && r.err.find(line, at + 1) == std::string::npos),
               line << "\n" << r.err);
  }
  // The same list in the machine-readable status, sorted, with the command's exit code.
  const std::string json = read_file(status).value_or("");
  BOOST_TEST(json.starts_with("{\"zpolicy_run_status\": 1, \"exit_code\": 0, "
                              "\"network_refusals\": [{\"host\": \"198.51.100.7\", \"port\": 8080, "
                              "\"reason\": \"not-listed\", "),
             json);
  size_t at = 0;
  for (const char* refusal :
       {"{\"host\": \"198.51.100.7\", \"port\": 8080, \"reason\": \"not-listed\", ",
        "{\"host\": \"allowed.test\", \"port\": 9090, \"reason\": \"port-not-listed\", ",
        "{\"host\": \"metadata.test\", \"port\": 8080, \"reason\": \"address-refused\", ",
        "{\"host\": \"other.test\", \"port\": 8080, \"reason\": \"not-listed\", ",
        "{\"host\": \"rebind-loop.test\", \"port\": 8080, \"reason\": \"address-refused\", ",
        "{\"host\": \"rebind-private.test\", \"port\": 8080, \"reason\": \"address-refused\", "}) {
    at = json.find(refusal, at);
    BOOST_TEST(at != std::string::npos, refusal << "\n" << json);
  }
  size_t listed = 0;
  for (size_t p = json.find("\"host\""); p != std::string::npos; p = json.find("\"host\"", p + 1))
    ++listed;
  BOOST_TEST(listed == 6u, json);
}

// A13B-3, A14B-9: a listed name that resolves to an address of this host, in any form
// that reaches it, reached the host's own services (a server bound to [::] or 0.0.0.0):
// only `localhost:PORT` entries may. The proxy asks the kernel how it routes each address,
// so every address it delivers here is refused before a connection is made: an interface's
// address, its broadcast address, the IPv6 forms that carry an IPv4 one, an address in the
// prefix of an address on `lo` (198.51.100.5 of 198.51.100.1/24: a connection leaves from
// .1, so its two ends differ), AnyIP `local` routes (IPv4 and IPv6, which no interface
// shows), and a `local` route that a policy rule selects for TCP to the port asked for
// only (the question must carry the protocol and port). The host-only server accepts no connection; a host on the same link, and an IPv6
// one, are still reached.
BOOST_DATA_TEST_CASE(a_listed_name_on_an_address_of_this_host_reaches_none_of_its_services,
                     bdata::make(kCallers), caller) {
  Sandbox sb(caller);
  const std::string servers = sb.base() + "/servers.py", hosts = sb.base() + "/hosts",
                    hits = sb.base() + "/hits";
  sb.write_file(servers, kServers);
  // 192.0.2.2 and 2001:db8::2 are this host's interface's; the rest are on its `lo`.
  const std::vector<std::pair<std::string, std::string>> own = {
      {"self4", "192.0.2.2"},
      {"self6", "2001:db8::2"},
      {"nat64", "64:ff9b::c000:202"},
      {"sixtofour", "2002:c000:202::1"},
      {"siit", "::ffff:0:c000:202"},
      {"teredo", "2001:0:c000:202::3fff:fdfd"},
      {"isatap", "2001:db8::5efe:c000:202"},
      {"broadcast", "192.0.2.255"},
      {"mapped", "::ffff:192.0.2.2"},
      {"any4", "0.0.0.0"},
      {"any6", "::"},
      {"prefix4", "198.51.100.5"},
      {"anyip", "203.0.113.9"},
      {"anyip6", "2001:db8:5::7"},
      {"ruled", "203.0.113.200"}};
  std::string hosts_text = "127.0.0.1 localhost\n192.0.2.1 lan.test\n2001:db8::1 remote6.test\n";
  std::string allow = "[lan.test:8080, remote6.test:8080";
  std::string urls = "http://lan.test:8080/lan http://remote6.test:8080/remote6";
  for (const auto& [name, address] : own) {
    hosts_text += address + " " + name + ".test\n";
    allow += ", " + name + ".test:18081";
    urls += " http://" + name + ".test:18081/" + name;
  }
  sb.write_file(hosts, hosts_text);
  const std::string policy = sb.write_policy(
      "allow.yaml", "zpolicy: 1\nmode: workspace-write\nnetwork:\n  allow: " + allow + "]\n");
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/usr/bin/python3", "-c", kPlainClient, urls};
  const std::string py = "/usr/bin/python3 " + servers + " " + hits + " 60 ";
  spec.root_prefix =
      on_two_hosts({.hosts_file = hosts,
                    .other_addresses = {},
                    .on_other_host = py + hits + ".other http:192.0.2.1:8080 http:2001:db8::1:8080",
                    .on_this_host = "ip addr add 198.51.100.1/24 dev lo && "
                                    "ip route add local 203.0.113.0/25 dev lo && "
                                    "ip -6 route add local 2001:db8:5::/64 dev lo && "
                                    "ip rule add ipproto tcp dport 18081 lookup 100 && "
                                    "ip route add local 203.0.113.128/25 dev lo table 100 "
                                    "src 127.0.0.1 && " +
                                    py + hits + ".this raw:18081",
                    .ready_files = {hits + ".other", hits + ".this"}});
  const RunResult r = sb.run(spec);
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.describe());
  BOOST_TEST(has_line(r.out, "lan 200 hello from 192.0.2.1"), r.describe());
  BOOST_TEST(has_line(r.out, "remote6 200 hello from 2001:db8::1"), r.describe());
  for (const auto& [name, address] : own) {
    BOOST_TEST(has_line(r.out, name + " 403"), name << "\n" << r.describe());
    BOOST_TEST(r.err.find("zpolicy: network: refused " + name + ".test:18081 (address-refused)") !=
                   std::string::npos,
               name << "\n"
                    << r.err);
  }
  // Nothing of this host was connected to: each was refused before the connect.
  const std::string got = read_file(hits).value_or("");
  BOOST_TEST(got == "HTTP 192.0.2.1:8080 /lan\nHTTP 2001:db8::1:8080 /remote6\n", got);
}

// The command decides how many destinations it asks for; what zpolicy keeps of their
// refusals does not grow with them (red team R8-S4): 300 unlisted names, then one name
// longer than any host name, whose request is malformed (400) and never recorded.
BOOST_DATA_TEST_CASE(the_refusals_kept_are_bounded_whatever_the_command_asks,
                     bdata::make(kCallers), caller) {
  Sandbox sb(caller);
  const std::string policy =
      sb.write_policy("allow.yaml", "zpolicy: 1\nmode: workspace-write\nnetwork:\n  allow: [allowed.test:8080]\n");
  RunSpec spec;
  const std::string status = sb.home() + "/status.json";
  spec.options = {"--policy", policy, "--status-file", status};
  spec.command = {"/usr/bin/python3", "-c", R"PY(import os, socket
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
def ask(host):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"CONNECT %s:443 HTTP/1.1\r\nHost: x\r\n\r\n" % host.encode())
    answer = s.recv(64).split(b" ")[1].decode()
    s.close()
    return answer
print(sorted({ask("n%d.test" % i) for i in range(300)}), ask("a" * 254 + ".test"))
)PY"};
  const RunResult r = sb.run(spec);
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out == "['403'] 400\n", r.describe());
  size_t lines = 0;
  for (size_t p = r.err.find("zpolicy: network: refused n"); p != std::string::npos;
       p = r.err.find("zpolicy: network: refused n", p + 1))
    ++lines;
  BOOST_TEST(lines == 256u, r.err);
  BOOST_TEST(r.err.find("zpolicy: network: refused 44 more connection(s) to other destinations, "
                        "not listed one by one\n") != std::string::npos,
             r.err);
  const std::string json = read_file(status).value_or("");
  size_t listed = 0;
  for (size_t p = json.find("\"host\""); p != std::string::npos; p = json.find("\"host\"", p + 1))
    ++listed;
  BOOST_TEST(listed == 256u, json.size());
  BOOST_TEST(json.ends_with("], \"network_refusals_omitted\": 44, \"nothing_ran\": false}\n"),
             json.substr(json.size() - 80));
  BOOST_TEST(json.find("aaaa") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
