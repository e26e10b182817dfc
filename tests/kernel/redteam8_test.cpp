#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include <fstream>
#include <string>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// Round 8 of the red-team pass (docs/redteam-2026-12.md "Round 8"): names other users
// take first, system directories as workspaces, concurrent runs' placeholders, and the
// caller's standard streams.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// A RunSpec::root_prefix: a private mount namespace with a fresh /tmp, in which `setup`
// runs as root before zpolicy starts as the caller; zpolicy's status is kept, and
// `after` runs once it has exited (its output is the harness's stdout).
std::vector<std::string> in_fresh_tmp(const std::string& setup, const std::string& after) {
  return {"/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
          "mount -t tmpfs -o mode=1777 tmpfs /tmp && " + setup + " && \"$@\"; rc=$?; " + after +
              "; exit $rc",
          "sh"};
}

std::string as_uid_4242(const std::string& cmd) {
  return "/usr/bin/setpriv --reuid=4242 --regid=4242 --clear-groups " + cmd;
}

// A host UDP socket on a loopback port of its own, non-blocking: a datagram the sandbox
// sends there shows in recv(2). Sets `port` to its port number.
int loopback_udp_listener(std::string& port) {
  const int listener = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof at;
  BOOST_REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
  BOOST_REQUIRE(getsockname(listener, reinterpret_cast<sockaddr*>(&at), &len) == 0);
  port = std::to_string(ntohs(at.sin_port));
  return listener;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_redteam8)

// R8-L1 (R7-L1): another local user takes the name of the caller's state directory first
// (/tmp/zpolicy-UID, every unprivileged caller's: cron jobs, CI accounts, nobody), and
// the decoys of the name a run falls back to. Every run of the caller refused (exit 125)
// until root removed the directory. Root's state lives in /run/zpolicy, which only root
// can create: for root this is a control.
BOOST_DATA_TEST_CASE(a_state_directory_name_taken_by_another_user_stops_no_run,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string uid = std::to_string(uid_of(caller));
  const std::string fixed = "/tmp/zpolicy-" + uid;
  RunSpec spec;
  spec.root_prefix = in_fresh_tmp(
      as_uid_4242("install -d -m 0700 " + fixed) + " && " +
          as_uid_4242("install -d -m 0700 " + fixed + "-AAAAAA") + " && " +
          "install -d -o " + uid + " -m 0777 " + fixed + "-BBBBBB && ln -s " + box.base() + " " +
          fixed + "-CCCCCC && \"$@\" && \"$@\" && \"$@\"",
      "stat -c '%n %u %a' /tmp/* | sort");
  spec.command = {"/bin/sh", "-c", "echo ran >> ran"};
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 0, r.describe());
  BOOST_CHECK_EQUAL(read_file(box.ws("ran")).value_or(""), "ran\nran\nran\nran\n");
  // The other user's directories are left as they were, and no run used a decoy.
  BOOST_CHECK_MESSAGE(r.out.find(fixed + " 4242 700\n") != std::string::npos, r.out);
  BOOST_CHECK_MESSAGE(r.out.find(fixed + "-AAAAAA 4242 700\n") != std::string::npos, r.out);
  BOOST_CHECK_MESSAGE(r.out.find(fixed + "-BBBBBB " + uid + " 777\n") != std::string::npos, r.out);
  BOOST_CHECK(!exists(box.base() + "/lock"));
  // Each run kept its state in a directory of its own and removed it (red team A10B-2: a
  // directory found again by name could be one a sandbox made).
  BOOST_CHECK_MESSAGE(r.out.find(" " + uid + " 700\n") == std::string::npos,
                      "a state directory of the caller's is left: " << r.out);
}

// R8-P1: concurrent runs in one fresh workspace, ending together, while a run of the same
// caller elsewhere outlives them (another job of the same CI account, a second terminal).
// None of them is alone on the host at its end, so each left its record and placeholders
// for later, and the run that ended last and alone removed only its own: after every run
// had exited 0, .env, .git, node_modules ... stayed in the workspace (also when two runs
// end within microseconds of each other: the one that got the lock read the other's record
// as live). The workspace must be exactly as before once the last run is gone.
BOOST_DATA_TEST_CASE(concurrent_runs_leave_the_workspace_as_it_was, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  Sandbox elsewhere(caller);
  box.write_file(box.ws("README"), "x\n");
  const std::string before = snapshot(box.workspace());
  const std::string before_elsewhere = snapshot(elsewhere.workspace());
  auto wait_for = [](const std::string& file) {
    return std::vector<std::string>{
        "/bin/sh", "-c", "i=0; while [ ! -e " + file + " ] && [ $i -lt 400 ]; do sleep 0.02; i=$((i+1)); done"};
  };
  const std::string go = box.base() + "/go", end = elsewhere.base() + "/end";
  RunSpec hold;
  hold.command = wait_for(end);
  Running outliving = elsewhere.start(hold);
  BOOST_REQUIRE(wait_until([&] { return exists(elsewhere.ws(".env")); }, std::chrono::seconds(10)));
  std::vector<Running> runs;
  RunSpec together;
  together.command = wait_for(go);
  for (int i = 0; i < 4; ++i) runs.push_back(box.start(together));
  BOOST_REQUIRE(wait_until([&] { return exists(box.ws(".env")); }, std::chrono::seconds(10)));
  std::ofstream(go).put('\n');
  for (auto& r : runs) {
    const RunResult res = box.finish(r);
    BOOST_CHECK_MESSAGE(res.exit_code == 0, res.describe());
  }
  std::ofstream(end).put('\n');
  const RunResult last = elsewhere.finish(outliving);
  BOOST_CHECK_MESSAGE(last.exit_code == 0, last.describe());
  BOOST_CHECK_EQUAL(snapshot(box.workspace()), before);
  BOOST_CHECK_EQUAL(snapshot(elsewhere.workspace()), before_elsewhere);
}

// R8-W1: ZP013 knew /etc, /usr, /var/lib ... by name only, and not /opt (installed
// software), nor /srv, /mnt, /media themselves, nor a system directory under another name
// through a bind mount, nor one bound below the workspace (bwrap's bind is recursive).
// Each ran with the directory writable. Checked in a mount namespace of the test's own,
// with tmpfs over /opt, /srv, /mnt and /media, so nothing of the host's is ever bound.
BOOST_DATA_TEST_CASE(a_system_directory_as_a_workspace_is_refused_by_every_name,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string uid = std::to_string(uid_of(caller));
  const std::string alias = box.base() + "/alias";
  box.make_dir(alias);
  box.make_dir(box.ws("tool"));
  RunSpec spec;
  spec.root_prefix = {
      "/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
      "for d in /opt /srv /mnt /media; do mount -t tmpfs -o mode=0755 tmpfs $d || exit 99; done; "
      "install -d -o " + uid + " /opt/tool /srv/app /mnt/data /media/usb && "
      "mount --bind /opt/tool " + alias + " && mount --bind /opt/tool " + box.ws("tool") + " && "
      "for w in /opt /opt/tool /srv /mnt /media " + alias + " " + box.workspace() +
          " /srv/app /mnt/data /media/usb; do cd $w || exit 98; out=$(\"$@\" 2>&1); rc=$?; "
          "case \"$out\" in *ZP013*) echo ZP013;; esac; echo \"$w $rc\"; done",
      "sh"};
  spec.command = {"/bin/true"};
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 0, r.describe());
  for (const std::string& w : std::vector<std::string>{"/opt", "/opt/tool", "/srv", "/mnt", "/media", alias, box.workspace()})
    BOOST_CHECK_MESSAGE(r.out.find("ZP013\n" + w + " 3\n") != std::string::npos,
                        w << " not refused by ZP013: " << r.out);
  for (const std::string w : {"/srv/app", "/mnt/data", "/media/usb"})
    BOOST_CHECK_MESSAGE(r.out.find("\n" + w + " 0\n") != std::string::npos,
                        w << " refused: " << r.out);
}

// R8-D1: a closed stdin, stdout or stderr is the number of the next file zpolicy opens,
// and that file reached the sandbox in its place: `zpolicy run ... <&-` gave the command
// a copy of the host run lock as stdin, `<&- >&-` refused the run ("stdout is a
// directory": the workspace's bind descriptor). Now each closed one is /dev/null (1:3).
BOOST_DATA_TEST_CASE(a_closed_standard_descriptor_is_not_replaced_by_a_file_of_zpolicys,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"<&-", {"0"}}, {">&-", {"1"}}, {"2>&-", {"2"}}, {"<&- >&- 2>&-", {"0", "1", "2"}}};
  for (const auto& [closing, closed] : cases) {
    RunSpec spec;
    spec.root_prefix = {"/bin/sh", "-c", "exec \"$@\" " + closing, "sh"};
    spec.command = {"/bin/sh", "-c",
                    "for n in 0 1 2; do echo $n $(stat -L -c %t:%T /proc/$$/fd/$n) >> fds; done"};
    const RunResult r = box.run(spec);
    BOOST_CHECK_MESSAGE(r.exit_code == 0, closing << ": " << r.describe());
    const std::string fds = read_file(box.ws("fds")).value_or("");
    for (const auto& fd : closed)
      BOOST_CHECK_MESSAGE(fds.find(fd + " 1:3\n") != std::string::npos,
                          closing << ": fd " << fd << " is not /dev/null: " << fds);
    box.host_command({"/bin/rm", "-f", box.ws("fds")});
  }
}

// R8-D2: a socket on stdin passed as it is. An unconnected UDP socket (or a connected
// one: sendmsg(2) takes an address, which seccomp cannot see) sent to any host address
// under `network: none`, and a listening socket accepted host connections. Only a
// connected stream socket passes (a control: it works both ways).
BOOST_DATA_TEST_CASE(a_socket_on_stdin_reaches_only_its_peer, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  std::string port;
  const int listener = loopback_udp_listener(port);
  const int udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const int tcp_listening = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  BOOST_REQUIRE(bind(tcp_listening, reinterpret_cast<sockaddr*>(&any), sizeof any) == 0 &&
                listen(tcp_listening, 4) == 0);
  for (const int fd : {udp, tcp_listening}) {
    RunSpec spec;
    spec.stdin_fd = fd;
    spec.command = {"/usr/bin/python3", "-c",
                    "import socket\ns = socket.socket(fileno=0)\n"
                    "try: s.sendmsg([b'escaped'], [], 0, ('127.0.0.1', " + port + "))\n"
                    "except OSError: pass\n"};
    const RunResult r = box.run(spec);
    BOOST_CHECK_MESSAGE(r.exit_code == 2, r.describe());
    BOOST_CHECK_MESSAGE(r.err.find("is a socket that is not a connected stream") != std::string::npos,
                        r.describe());
  }
  char got[64];
  BOOST_CHECK_MESSAGE(recv(listener, got, sizeof got, 0) < 0, "the host listener got a datagram");
  int pair[2];
  BOOST_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
  BOOST_REQUIRE(write(pair[1], "ping\n", 5) == 5);
  RunSpec spec;
  spec.stdin_fd = pair[0];
  spec.command = {"/bin/sh", "-c", "read x && echo \"$x-pong\" >&0"};
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 0, r.describe());
  const ssize_t n = recv(pair[1], got, sizeof got, MSG_DONTWAIT);
  BOOST_CHECK_EQUAL(std::string(got, n > 0 ? static_cast<size_t>(n) : 0), "ping-pong\n");
  for (int fd : {listener, udp, tcp_listening, pair[0], pair[1]}) close(fd);
}

// R8-D4: a pseudo-terminal's master on stdin is a terminal to isatty(3), so it passed; what
// the sandbox wrote to it was typed into the program on the other side (here a host
// reader on the slave). A terminal's own side (the slave) still passes.
BOOST_DATA_TEST_CASE(a_pseudo_terminal_master_on_stdin_is_refused, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  BOOST_REQUIRE(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
  const int slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  BOOST_REQUIRE(slave >= 0);
  RunSpec spec;
  spec.stdin_fd = master;
  spec.command = {"/bin/sh", "-c", "echo typed-by-the-sandbox >&0"};
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 2, r.describe());
  BOOST_CHECK_MESSAGE(r.err.find("master side of a pseudo-terminal") != std::string::npos, r.describe());
  char got[128];
  const ssize_t n = read(slave, got, sizeof got);
  BOOST_CHECK_MESSAGE(n <= 0, "typed on the host: " << std::string(got, n > 0 ? static_cast<size_t>(n) : 0));
  RunSpec own;
  own.stdin_fd = slave;
  own.command = {"/bin/sh", "-c", "test -t 0 && echo on-a-terminal"};
  const RunResult t = box.run(own);
  BOOST_CHECK_MESSAGE(t.exit_code == 0 && t.out.find("on-a-terminal") != std::string::npos, t.describe());
  close(slave);
  close(master);
}

// R8-D3: a regular file on stdin was copied whole into memory (a sealed memfd) before the
// command started: a 20 GB file took 20 GB of shared memory. Up to 16 MiB still is (the
// command can seek); a larger rest arrives through a pipe, byte for byte.
BOOST_DATA_TEST_CASE(a_large_file_on_stdin_is_not_held_in_memory, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string big = box.home() + "/big", small = box.home() + "/small";
  box.host_command({"/bin/sh", "-c",
                    "head -c 24000000 /dev/urandom > " + big + " && head -c 5000 " + big + " > " + small});
  const std::string script =
      "readlink /proc/$$/fd/0 | cut -c1-6 > kind; cksum | cut -d' ' -f1,2 > sum";
  for (const auto& [file, kind] : {std::pair{big, std::string("pipe:[")}, std::pair{small, std::string("/memfd")}}) {
    const int in = open(file.c_str(), O_RDONLY | O_CLOEXEC);
    BOOST_REQUIRE(in >= 0);
    RunSpec spec;
    spec.stdin_fd = in;
    spec.command = {"/bin/sh", "-c", script};
    const RunResult r = box.run(spec);
    close(in);
    BOOST_CHECK_MESSAGE(r.exit_code == 0, r.describe());
    BOOST_CHECK_EQUAL(read_file(box.ws("kind")).value_or(""), kind + "\n");
    const RunResult host = box.host_command({"/bin/sh", "-c", "cksum < " + file + " | cut -d' ' -f1,2"});
    BOOST_CHECK_EQUAL(read_file(box.ws("sum")).value_or(""), host.out);
  }
}

// R8-S1: a run refused before its command could start (here: a named FIFO on stdin, exit
// 2) ended with "the command exited with status 2 ...; whether the sandbox refused it:
// zpolicy explain", after "nothing ran": a harness reading the last line took zpolicy's
// refusal for the command's own status.
BOOST_DATA_TEST_CASE(a_refusal_before_the_command_starts_is_not_called_the_commands_status,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string fifo = box.home() + "/fifo";
  box.host_command({"/usr/bin/mkfifo", fifo});
  const int in = open(fifo.c_str(), O_RDWR | O_CLOEXEC);
  BOOST_REQUIRE(in >= 0);
  RunSpec spec;
  spec.stdin_fd = in;
  spec.command = {"/bin/true"};
  const RunResult r = box.run(spec);
  close(in);
  BOOST_CHECK_MESSAGE(r.exit_code == 2, r.describe());
  BOOST_CHECK_MESSAGE(r.err.find("nothing ran") != std::string::npos, r.describe());
  BOOST_CHECK_MESSAGE(r.err.find("the command exited") == std::string::npos, r.describe());
}

// R8-D2, R8-D3, R8-D4 for an executor of a plan: examples/python/run_plan.py passed any
// socket and any terminal as they are, and copied a stdin file whole into memory.
BOOST_DATA_TEST_CASE(an_executors_stdin_reaches_only_its_peer, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string executor =
      box.write_policy("run_plan.py", source_file("examples/python/run_plan.py"));
  auto launcher_for = [&](const std::string& name, const std::string& script) {
    const auto planned =
        box.host_command({zpolicy_binary(), "plan", "--format", "json", "--", "/bin/sh", "-c", script});
    return std::vector<std::string>{"/usr/bin/python3", executor, box.write_policy(name, planned.out)};
  };
  std::string port;
  const int listener = loopback_udp_listener(port);
  const int udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  RunSpec spec;
  spec.launcher = launcher_for("send.json", "exec python3 -c \"import socket; socket.socket(fileno=0)"
                                            ".sendmsg([b'escaped'], [], 0, ('127.0.0.1', " +
                                                port + "))\"");
  spec.stdin_fd = udp;
  const RunResult sent = box.run(spec);
  BOOST_CHECK_MESSAGE(sent.exit_code == 125, sent.describe());
  char got[64];
  BOOST_CHECK_MESSAGE(recv(listener, got, sizeof got, 0) < 0, "the host listener got a datagram");
  const int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  BOOST_REQUIRE(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
  const int slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  spec.launcher = launcher_for("type.json", "echo typed-by-the-sandbox >&0");
  spec.stdin_fd = master;
  const RunResult typed = box.run(spec);
  BOOST_CHECK_MESSAGE(typed.exit_code == 125, typed.describe());
  const ssize_t n = read(slave, got, sizeof got);
  BOOST_CHECK_MESSAGE(n <= 0, "typed on the host: " << std::string(got, n > 0 ? static_cast<size_t>(n) : 0));
  const std::string big = box.home() + "/big";
  box.host_command({"/bin/sh", "-c", "head -c 20000000 /dev/urandom > " + big});
  spec.launcher = launcher_for("big.json", "readlink /proc/$$/fd/0 | cut -c1-6; cksum | cut -d' ' -f1,2");
  spec.stdin_fd = open(big.c_str(), O_RDONLY | O_CLOEXEC);
  const RunResult streamed = box.run(spec);
  close(spec.stdin_fd);
  const RunResult host = box.host_command({"/bin/sh", "-c", "cksum < " + big + " | cut -d' ' -f1,2"});
  BOOST_CHECK_MESSAGE(streamed.exit_code == 0, streamed.describe());
  BOOST_CHECK_EQUAL(streamed.out, "pipe:[\n" + host.out);
  for (int fd : {listener, udp, master, slave}) close(fd);
}

// R8-H1: a deny root that did not exist when the run started was not masked ("nothing can
// create it"): the host can. `aws configure` in another terminal while an agent runs makes
// ~/.aws/credentials, which the sandbox then read through the read-only view of the home.
// The run now watches for the creation of the first missing name on the way and stops the
// sandbox; creating other names there does not.
BOOST_DATA_TEST_CASE(a_deny_root_created_on_the_host_during_the_run_is_never_read,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string later = box.base() + "/later", secret = later + "/creds/secret";
  const std::string policy = box.write_policy(
      "deny-later.yaml", "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n"
                         "  write: [\"${WORKSPACE}\"]\n  deny: [\"" + later + "/creds\"]\n");
  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/bin/sh", "-c",
                  "touch started; i=0; while [ ! -e " + box.base() + "/go ] && [ $i -lt 200 ]; do "
                  "sleep 0.02; i=$((i+1)); done; sleep 0.5; cat " + secret + "; exit 0"};
  Running running = box.start(spec);
  BOOST_REQUIRE(wait_until([&] { return exists(box.ws("started")); }, std::chrono::seconds(10)));
  std::ofstream(box.base() + "/other").put('\n');  // another name there: the run goes on
  BOOST_REQUIRE(mkdir(later.c_str(), 0755) == 0 && mkdir((later + "/creds").c_str(), 0755) == 0);
  std::ofstream(secret) << "AKIA-EXAMPLE\n";
  std::ofstream(box.base() + "/go").put('\n');
  const RunResult r = box.finish(running);
  BOOST_CHECK_MESSAGE(r.exit_code == 125, r.describe());
  BOOST_CHECK_MESSAGE(r.out.find("AKIA") == std::string::npos, "the sandbox read it: " << r.describe());
  BOOST_CHECK_MESSAGE(r.err.find("did not exist when the run started, was created") != std::string::npos,
                      r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
