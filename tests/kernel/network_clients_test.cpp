#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"
#include "two_hosts.hpp"

// Real clients through zpolicy's proxy (docs/network.md "Tests"): `git clone` over smart
// HTTP from `git http-backend`, and `pip download` from a simple index, both served from
// another host (on_two_hosts), as in kernel_network_allow. The listed names work; the same clients
// asking for a name that is not listed fail, their server receives nothing, and the refusals are
// reported.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// argv: SRV HITS SECONDS. Makes a bare repository SRV/repo.git (one commit, fixed
// content) and a simple index SRV/simple/demo-pkg/ with one wheel, then serves HTTP on
// 198.51.100.7:8080: /repo.git/... through `git http-backend` (CGI), everything else as
// files from SRV (and SRV/big, 32 MiB). Appends "HOST PATH" to HITS for each request.
const char* kServer =
    R"PY(import http.server, os, subprocess, sys, threading, time, urllib.parse, zipfile
srv, hits_path, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
           GIT_COMMITTER_EMAIL="t@t", GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
           GIT_COMMITTER_DATE="2026-01-01T00:00:00Z", HOME=srv)
work = srv + "/work"
os.makedirs(work)
with open(work + "/hello.txt", "w") as f: f.write("cloned through the proxy\n")
for args in (["init", "-q", "-b", "main", work], ["-C", work, "add", "hello.txt"],
             ["-C", work, "commit", "-q", "-m", "one"],
             ["clone", "-q", "--bare", work, srv + "/repo.git"]):
    subprocess.run(["git"] + args, env=env, check=True)
with open(srv + "/big", "wb") as f: f.truncate(32 << 20)
os.makedirs(srv + "/simple/demo-pkg")
wheel = "demo_pkg-1.0-py3-none-any.whl"
with zipfile.ZipFile(srv + "/simple/demo-pkg/" + wheel, "w") as z:
    z.writestr("demo_pkg/__init__.py", "")
    z.writestr("demo_pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n")
    z.writestr("demo_pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("demo_pkg-1.0.dist-info/RECORD", "")
with open(srv + "/simple/demo-pkg/index.html", "w") as f:
    f.write('<html><body><a href="%s">%s</a></body></html>\n' % (wheel, wheel))
lock = threading.Lock()
class H(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k): super().__init__(*a, directory=srv, **k)
    def log_message(self, *a): pass
    def route(self):
        with lock, open(hits_path, "a") as f:
            f.write("%s %s\n" % (self.headers.get("Host"), self.path))
        self.path = urllib.parse.urlsplit(self.path)._replace(scheme="", netloc="").geturl()
        return self.path.startswith("/repo.git/")
    def do_GET(self):
        if self.route(): self.git()
        else: super().do_GET()
    def do_POST(self):
        if self.route(): self.git()
        else: self.send_error(405)
    def git(self):
        path, _, query = self.path.partition("?")
        cgi = dict(env, GIT_PROJECT_ROOT=srv, GIT_HTTP_EXPORT_ALL="1", PATH_INFO=path,
                   QUERY_STRING=query, REQUEST_METHOD=self.command, REMOTE_ADDR="127.0.0.1",
                   CONTENT_TYPE=self.headers.get("Content-Type", ""),
                   HTTP_CONTENT_ENCODING=self.headers.get("Content-Encoding", ""),
                   GIT_PROTOCOL=self.headers.get("Git-Protocol", ""))
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        cgi["CONTENT_LENGTH"] = str(len(body))
        out = subprocess.run(["git", "http-backend"], input=body, env=cgi, capture_output=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(": ")
            if name.lower() == "status": status = int(value.split()[0])
            elif name: headers.append((name, value))
        self.send_response(status)
        for h in headers: self.send_header(*h)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, *a): pass  # a client that hangs up is part of the test
threading.Thread(target=Server(("198.51.100.7", 8080), H).serve_forever, daemon=True).start()
open(hits_path + ".ready", "w").close()
time.sleep(seconds)
)PY";

const char* kClientsHosts = "127.0.0.1 localhost\n198.51.100.7 git.test pypi.test other.test\n";

const char* kClientsPolicy = R"YAML(zpolicy: 1
mode: workspace-write
network:
  allow:
    - git.test:8080
    - pypi.test:8080
)YAML";

// Inside the sandbox: a download the client hangs up on, then each client once with a
// listed name and once with one that is not.
const char* kClientsScript = R"SH(export GIT_TERMINAL_PROMPT=0
curl -s http://git.test:8080/big | head -c 4 | od -An -tx1 | sed 's/^/hung-up/'
git clone -q http://git.test:8080/repo.git cloned && echo "git-listed $(cat cloned/hello.txt)"
git clone -q http://other.test:8080/repo.git refused 2>/dev/null || echo "git-unlisted failed"
pip() { /usr/bin/python3 -m pip download -q --no-cache-dir --disable-pip-version-check \
  --trusted-host pypi.test --trusted-host other.test \
  --retries 0 --timeout 5 --no-deps -d "$@"; }
pip dl --index-url http://pypi.test:8080/simple/ demo-pkg && echo "pip-listed $(ls dl)"
pip dl2 --index-url http://other.test:8080/simple/ demo-pkg >/dev/null 2>&1 || echo "pip-unlisted failed"
)SH";

bool has_output_line(const std::string& text, const std::string& line) {
  return ("\n" + text + "\n").find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_network_clients)

BOOST_DATA_TEST_CASE(git_and_pip_work_through_the_proxy_for_listed_names_only,
                     bdata::make(kCallers), caller) {
  for (const char* tool : {"/usr/bin/git", "/usr/lib/git-core/git-http-backend", "/usr/bin/curl",
                           "/usr/lib/python3/dist-packages/pip"})
    BOOST_TEST_REQUIRE(exists(tool), tool << " is missing: run scripts/install-deps.sh");
  Sandbox sb(caller);
  const std::string server = sb.base() + "/server.py", hosts = sb.base() + "/hosts",
                    hits = sb.base() + "/hits", srv = sb.base() + "/srv";
  sb.write_file(server, kServer);
  sb.write_file(hosts, kClientsHosts);
  const std::string policy = sb.write_policy("clients.yaml", kClientsPolicy);
  const std::string status = sb.home() + "/status.json";
  RunSpec spec;
  spec.options = {"--policy", policy, "--status-file", status};
  spec.command = {"bash", "-c", kClientsScript};
  spec.root_prefix =
      on_two_hosts({.hosts_file = hosts,
                    .other_addresses = {"198.51.100.7"},
                    .on_other_host = "/usr/bin/python3 " + server + " " + srv + " " + hits + " 60",
                    .on_this_host = ":",
                    .ready_files = {hits + ".ready"}});
  const RunResult r = sb.run(spec);
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.describe());
  // A client that hung up in the middle of a download (the proxy's write to it fails)
  // ended nothing but that connection.
  BOOST_TEST(has_output_line(r.out, "hung-up 00 00 00 00"), r.describe());
  BOOST_TEST(has_output_line(r.out, "git-listed cloned through the proxy"), r.describe());
  BOOST_TEST(has_output_line(r.out, "git-unlisted failed"), r.describe());
  BOOST_TEST(has_output_line(r.out, "pip-listed demo_pkg-1.0-py3-none-any.whl"), r.describe());
  BOOST_TEST(has_output_line(r.out, "pip-unlisted failed"), r.describe());
  // The clone is the repository's content, written in the workspace.
  BOOST_TEST(read_file(sb.ws("cloned/hello.txt")).value_or("") == "cloned through the proxy\n");
  // Smart HTTP (the upload-pack service), the index and the wheel reached the server; the
  // name that is not listed reached nothing.
  const std::string got = read_file(hits).value_or("");
  BOOST_TEST(
      got.find("git.test:8080 /repo.git/info/refs?service=git-upload-pack\n") != std::string::npos,
      got);
  BOOST_TEST(got.find("git.test:8080 /repo.git/git-upload-pack\n") != std::string::npos, got);
  BOOST_TEST(got.find("pypi.test:8080 /simple/demo-pkg/\n") != std::string::npos, got);
  BOOST_TEST(got.find("pypi.test:8080 /simple/demo-pkg/demo_pkg-1.0-py3-none-any.whl\n") !=
                 std::string::npos,
             got);
  BOOST_TEST(got.find("other.test") == std::string::npos, got);
  BOOST_TEST(
      r.err.find("zpolicy: network: refused other.test:8080 (not-listed)") != std::string::npos,
      r.err);
  BOOST_TEST(read_file(status).value_or("").find(
                 "{\"host\": \"other.test\", \"port\": 8080, \"reason\": \"not-listed\", ") !=
             std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
