#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <thread>

#include "process_tree.hpp"
#include "sandbox_fixture.hpp"
#include "two_hosts.hpp"

// Round 6 of the red-team pass (docs/redteam-2026-12.md "Round 6"): signals and timeouts
// around the release, and what a sandbox can leave for the runs and the host after it.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

using namespace std::chrono_literals;

// Starts `spec` and stops the sandbox's init (SIGSTOP) as soon as it exists; returns its
// pid if it was stopped before bwrap's release read returned (it still holds --block-fd,
// which bwrap closes right after that read, is not in that read, where zpolicy may be
// releasing it meanwhile, and its seccomp pipe is still empty), else 0. While the init
// is stopped, zpolicy waits in its setup check: what it gets meanwhile comes during the
// check.
pid_t stopped_before_release(Running& r, const Sandbox& box, const RunSpec& spec) {
  r = box.start(spec);
  pid_t init = 0;
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (!init && std::chrono::steady_clock::now() < until) init = sandbox_init(r.pid);
  if (!init) return 0;
  const pid_t monitor = parent_of(init);
  kill(init, SIGSTOP);
  // The stop takes effect when the init next leaves the kernel: until then it may go on
  // into its read of the block fd and be released. It is judged only once it is stopped
  // (a faster runner released it in that window once, and the test took it for held).
  if (!wait_until([&] { return process_state(init) == 'T'; }, 2s)) {
    kill(init, SIGCONT);
    return 0;
  }
  const int fd = block_fd_of(monitor);
  // Stopped between the release read and the close of the block fd, the init would look
  // held: the seccomp program (fd 3), which the runner hands over at the release, tells.
  if (fd < 0 || blocked_on_release(init) ||
      !exists("/proc/" + std::to_string(init) + "/fd/" + std::to_string(fd)) ||
      pipe_bytes(init, 3) != 0) {
    kill(init, SIGCONT);
    return 0;
  }
  return init;
}

// HTTP servers on two documentation addresses of a private network namespace: the
// listed www.allowed.test and the unlisted evil.test; one line per request in HITS with
// the address, the Host header and the path. argv: HITS SECONDS.
const char* kUpstreamServers = R"PY(import sys, threading, time, http.server
hits = sys.argv[1]
lock = threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        with lock, open(hits, "a") as f:
            f.write("%s Host=%s %s\n" % (self.server.server_address[0], self.headers.get("Host"), self.path))
        b = b"hello\n"
        self.send_response(200); self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def log_message(self, *a): pass
for a in ("198.51.100.7", "198.51.100.8"):
    threading.Thread(target=lambda a=a: http.server.ThreadingHTTPServer((a, 8080), H).serve_forever(), daemon=True).start()
open(hits + ".ready", "w").close()
time.sleep(float(sys.argv[2]))
)PY";

// Inside the sandbox: raw requests to the proxy, each on its own connection.
const char* kProxyClient = R"PY(import socket
def ask(req):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=3)
    s.sendall(req)
    try:
        while s.recv(4096): pass
    except OSError: pass
    s.close()
for r in (b"CONNECT evil.test\x00.allowed.test:8080 HTTP/1.1\r\n\r\nGET /nul-connect HTTP/1.1\r\nHost: evil.test\r\n\r\n",
          b"GET http://evil.test\x00.allowed.test:8080/nul-get HTTP/1.1\r\nHost: evil.test\r\n\r\n",
          b"GET http://www.allowed.test:8080/host-header HTTP/1.1\r\nHost: evil.test\r\n\r\n",
          b"GET http://www.allowed.test:8080/first HTTP/1.1\r\nHost: www.allowed.test:8080\r\n\r\n"
          b"GET /second HTTP/1.1\r\nHost: evil.test\r\n\r\n",
          b"GET http://www.allowed.test:8080/bare-lf HTTP/1.1\r\nX-A: a\nHost: evil.test\r\n\r\n",
          b"GET http://www.allowed.test:8080/fold HTTP/1.1\r\nX-A: a\r\n Host: evil.test\r\n\r\n"):
    ask(r)
print("asked")
)PY";

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_redteam6)

// R6-N1: a NUL byte in the requested name: the wildcard matched the whole name as text,
// the resolver got the part before the NUL, and the proxy connected to an unlisted host.
// R6-N2: plain HTTP went on with the client's own Host header, and a kept-alive
// connection carried later requests with any Host to the admitted address (another site
// of a shared host or CDN); a bare LF or a folded line hid a second Host from the proxy.
// Observed from the servers' side: evil.test gets nothing, www.allowed.test one request,
// with its own name as Host.
BOOST_DATA_TEST_CASE(the_proxy_admits_only_the_listed_name_as_resolved_and_as_sent,
                     bdata::make(kCallers), caller) {
  Sandbox sb(caller);
  const std::string servers = sb.base() + "/servers.py", hosts = sb.base() + "/hosts",
                    hits = sb.base() + "/hits", client = sb.base() + "/client.py";
  sb.write_file(servers, kUpstreamServers);
  sb.write_file(client, kProxyClient);
  sb.write_file(hosts, "127.0.0.1 localhost\n198.51.100.7 evil.test\n198.51.100.8 www.allowed.test\n");
  const std::string policy = sb.write_policy(
      "allow.yaml", "zpolicy: 1\nmode: workspace-write\nnetwork:\n  allow: [\"*.allowed.test:8080\"]\n");
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/usr/bin/python3", client};
  spec.root_prefix =
      on_two_hosts({.hosts_file = hosts,
                    .other_addresses = {"198.51.100.7", "198.51.100.8"},
                    .on_other_host = "/usr/bin/python3 " + servers + " " + hits + " 30",
                    .on_this_host = ":",
                    .ready_files = {hits + ".ready"}});
  const RunResult r = sb.run(spec);
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out == "asked\n", r.describe());
  const std::string got = read_file(hits).value_or("");
  BOOST_TEST(got == "198.51.100.8 Host=www.allowed.test:8080 /host-header\n"
                    "198.51.100.8 Host=www.allowed.test:8080 /first\n",
             got);
}

// R5-K2: the runner looked at its signals and its deadline only after the setup check and
// the release, so a SIGINT or a timeout that came while the sandbox was checked started
// the command anyway (then forwarded the signal, or gave it SIGTERM). The sandbox's init is
// held (stopped) before its release, so zpolicy waits in its check; zpolicy gets SIGINT or
// passes its deadline meanwhile, then the init goes on: the run ends before the command
// starts, and says so truthfully.
BOOST_DATA_TEST_CASE(a_run_cancelled_while_the_sandbox_is_checked_never_starts_its_command,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  struct Case {
    std::string name;
    std::vector<std::string> options;
    int expected;
    std::string says;
  };
  const Case cases[] = {
      {"SIGINT", {}, 130, "interrupted by SIGINT before the command started; nothing ran"},
      {"timeout", {"--timeout", "500ms"}, 124, "timed out before the command started"},
  };
  for (const Case& c : cases) {
    bool held = false;
    for (int attempt = 0; attempt < 5 && !held; ++attempt) {
      RunSpec spec;
      spec.options = c.options;
      spec.command = {"/bin/sh", "-c", "echo x > ran"};
      Running r;
      const pid_t init = stopped_before_release(r, box, spec);
      const auto init_seen = std::chrono::steady_clock::now();
      held = init != 0;
      if (held && c.name == "SIGINT") kill(r.pid, SIGINT);
      // bwrap is started after the run's deadline was set: past this, it has passed.
      if (held && c.name != "SIGINT") std::this_thread::sleep_until(init_seen + 800ms);
      if (held) kill(init, SIGCONT);
      const RunResult res = box.finish(r);
      if (!held) {
        unlink(box.ws("ran").c_str());
        continue;
      }
      BOOST_CHECK_MESSAGE(res.exit_code == c.expected, c.name << ": " << res.describe());
      BOOST_CHECK_MESSAGE(res.err.find(c.says) != std::string::npos, c.name << ": " << res.describe());
      BOOST_CHECK_MESSAGE(res.err.find("nothing ran") != std::string::npos, c.name << ": " << res.describe());
      BOOST_CHECK_MESSAGE(!exists(box.ws("ran")), c.name << ": the command ran");
    }
    BOOST_CHECK_MESSAGE(held, c.name << ": no sandbox init was stopped before its release");
  }
}

// R6-S1: the refusal of a status file the sandbox could forge (R5-S2) walked up from the
// file's directory only. bwrap binds a writable root with the mounts below it, and a
// directory mounted below the workspace (ws/sub showing /data), or an alias of a
// directory inside it mounted elsewhere (/alias showing ws/inner), is writable inside
// under another name: the command renamed the status file away and put a forged one
// ("exit_code": 0) in its place. Both are refused now; the host's file is checked.
BOOST_DATA_TEST_CASE(a_status_file_reached_through_a_mount_inside_a_writable_root_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string data = box.base() + "/data", alias = box.base() + "/alias";
  box.make_dir(data);
  box.make_dir(alias);
  box.make_dir(box.ws("sub"));
  box.make_dir(box.ws("inner"));
  BOOST_REQUIRE(mount(data.c_str(), box.ws("sub").c_str(), nullptr, MS_BIND, nullptr) == 0);
  BOOST_REQUIRE(mount(box.ws("inner").c_str(), alias.c_str(), nullptr, MS_BIND, nullptr) == 0);
  const std::string forged = "{\"zpolicy_run_status\": 1, \"exit_code\": 0, \"network_refusals\": [], \"network_refusals_omitted\": 0}";
  for (const auto& [status, inside] : {std::pair{data + "/status.json", std::string("sub")},
                                       std::pair{alias + "/status.json", std::string("inner")}}) {
    RunSpec spec;
    spec.options = {"--status-file", status};
    spec.command = {"/bin/sh", "-c",
                    "mv " + inside + "/status.json " + inside + "/old.json; echo '" + forged +
                        "' > " + inside + "/status.json; exit 3"};
    const RunResult r = box.run(spec);
    BOOST_CHECK_MESSAGE(r.exit_code == 2, status << ": " << r.describe());
    BOOST_CHECK_MESSAGE(r.err.find("lies in writable root") != std::string::npos, r.describe());
    BOOST_CHECK_MESSAGE(read_file(status).value_or("") != forged + "\n", status << ": forged");
  }
  umount2(box.ws("sub").c_str(), MNT_DETACH);
  umount2(alias.c_str(), MNT_DETACH);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
