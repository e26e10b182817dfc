#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "process_tree.hpp"
#include "pty.hpp"
#include "sandbox_fixture.hpp"

// Round 7 of the red-team pass (docs/redteam-2026-12.md "Round 7"): what a sandbox can do
// to the names the host reads after it, and to the runs beside it.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// What a chmod, chown or utimensat of a node changes, as the host sees it.
std::string node_attributes(const struct stat& st) {
  return std::to_string(st.st_mode) + " " + std::to_string(st.st_uid) + ":" +
         std::to_string(st.st_gid) + " m" + std::to_string(st.st_mtim.tv_sec) + " c" +
         std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
}

// Everything the terminal's other end has to read by now.
std::string drain(int master) {
  std::string got;
  char buf[4096];
  for (pollfd p{master, POLLIN, 0}; poll(&p, 1, 200) == 1 && (p.revents & POLLIN);) {
    const ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

// The attempts on a device node's attributes, through the name `$1` and through
// /proc/self/fd/$2 (each must fail on the host's node), as the sandbox's uid.
const std::string kChangeNode =
    "chmod 000 \"$1\"; touch \"$1\"; touch -d 2000-01-01 \"$1\"; chown \"$(id -u)\" \"$1\"; "
    "for f in $2; do chmod 666 /proc/self/fd/$f; touch /proc/self/fd/$f; "
    "touch -d 2000-01-01 /proc/self/fd/$f; chown \"$(id -u)\" /proc/self/fd/$f; done";

const std::string kForged = "{\"zpolicy_run_status\": 1, \"exit_code\": 0, \"network_refusals\": [], \"network_refusals_omitted\": 0}";

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_redteam7)

// R7-S1: the status file named through a symlink that lies in the workspace. The file
// itself is outside every writable root, but the caller reads it by its name, and the
// command re-points the symlink at a status of its own.
BOOST_DATA_TEST_CASE(a_status_file_named_through_a_symlink_the_sandbox_can_replace_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string out = box.base() + "/out";
  box.make_dir(out);
  box.make_dir(box.ws("deep"));
  box.host_command({"/bin/ln", "-s", "../out", box.ws("l")});
  box.host_command({"/bin/ln", "-s", out, box.ws("deep/abs")});
  for (const auto& [status, link] :
       {std::pair{std::string("l/status.json"), std::string("l")},
        std::pair{box.ws("deep/abs/../out/status.json"), std::string("deep/abs")},
        std::pair{box.ws("deep/abs/status.json"), std::string("deep/abs")}}) {
    RunSpec spec;
    spec.options = {"--status-file", status};
    spec.command = {"/bin/sh", "-c",
                    "mkdir -p fake/out out && echo '" + kForged +
                        "' | tee fake/status.json fake/out/status.json > out/status.json && ln -sfn " +
                        box.workspace() + "/fake new && mv -T new " + link + "; exit 3"};
    const RunResult r = box.run(spec);
    BOOST_CHECK_MESSAGE(r.exit_code == 2, status << ": " << r.describe());
    BOOST_CHECK_MESSAGE(r.err.find("lies in writable root") != std::string::npos, r.describe());
    const std::string read_by_name = status.starts_with("/") ? status : box.ws(status);
    BOOST_CHECK_MESSAGE(read_file(read_by_name).value_or("") != kForged + "\n", status << ": forged");
    box.host_command({"/bin/rm", "-rf", box.ws("fake"), box.ws("out")});
    box.host_command({"/bin/ln", "-sfn", link == "l" ? "../out" : out, box.ws(link)});
  }
  // A symlink outside every writable root is the caller's own: the status is written.
  BOOST_REQUIRE(symlink(out.c_str(), (box.base() + "/mine").c_str()) == 0);
  RunSpec spec;
  spec.options = {"--status-file", box.base() + "/mine/status.json"};
  spec.command = {"/bin/sh", "-c", "exit 3"};
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 3, r.describe());
  BOOST_CHECK(read_file(out + "/status.json").value_or("").find("\"exit_code\": 3") !=
              std::string::npos);
}

// R7-S2: the status file was opened (created, truncated) before the refusal of R7-S1:
// through a symlink a sandbox planted in the workspace, zpolicy truncated or created a file
// of the status file's name in any directory the caller can write (as root: any).
BOOST_DATA_TEST_CASE(a_refused_status_file_is_neither_created_nor_truncated,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string victim = box.base() + "/victim";
  box.make_dir(victim);
  box.write_file(victim + "/status.json", "precious\n");
  box.host_command({"/bin/ln", "-s", victim, box.ws("results")});
  for (const std::string name : {"results/status.json", "results/new.json"}) {
    RunSpec spec;
    spec.options = {"--status-file", name};
    spec.command = {"/bin/true"};
    const RunResult r = box.run(spec);
    BOOST_CHECK_MESSAGE(r.exit_code == 2, name << ": " << r.describe());
  }
  BOOST_CHECK_EQUAL(read_file(victim + "/status.json").value_or(""), "precious\n");
  BOOST_CHECK(!exists(victim + "/new.json"));
}

// R7-W1: a workspace that holds another account's home directory (`cd /home && zpolicy
// run` as root; `/var/mail`, `/var/www`, `/var/backups` are system accounts' homes): a
// root-started sandbox keeps kuid 0 and writes that user's shell start-up files. The
// account is added to a copy of the password database that zpolicy sees through a private
// mount namespace, so the host's own is never touched.
BOOST_DATA_TEST_CASE(a_workspace_holding_another_accounts_home_is_refused, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("alice"));
  box.write_file(box.ws("alice/.bashrc"), "# alice\n");
  const std::string passwd = box.base() + "/passwd";
  {
    std::ifstream in("/etc/passwd");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    text += "rt7alice:x:4242:4242::" + box.ws("alice") + ":/bin/sh\n";
    std::ofstream(passwd) << text;
  }
  chmod(passwd.c_str(), 0644);
  RunSpec spec;
  spec.root_prefix = {"/usr/bin/unshare", "-m", "/bin/sh", "-c",
                      "mount --bind '" + passwd + "' /etc/passwd && exec \"$@\"", "sh"};
  spec.command = {"/bin/sh", "-c", "echo pwn >> alice/.bashrc"};
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 3, r.describe());
  BOOST_CHECK_MESSAGE(r.err.find("home directory of user 'rt7alice'") != std::string::npos, r.describe());
  BOOST_CHECK_EQUAL(read_file(box.ws("alice/.bashrc")).value_or(""), "# alice\n");
  // A workspace inside that home holds none of its start-up files: no finding.
  box.make_dir(box.ws("alice/project"));
  spec.cwd = box.ws("alice/project");
  spec.command = {"/bin/sh", "-c", "echo ok > made"};
  const RunResult inside = box.run(spec);
  BOOST_CHECK_MESSAGE(inside.exit_code == 0, inside.describe());
  BOOST_CHECK(read_file(box.ws("alice/project/made")).value_or("") == "ok\n");
}

// R7-D1 in the independent plan executor (examples/python/run_plan.py): a file on its
// stdin reaches the sandbox as a sealed copy, so /proc/self/fd/0 leads to nothing on the
// host; what the command prints still arrives. A directory on stdin runs nothing.
BOOST_DATA_TEST_CASE(an_executors_stdin_gives_the_sandbox_no_more_than_reading_it,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string outside = box.base() + "/outside";
  box.make_dir(outside);
  box.write_file(outside + "/task.sh", "echo task\n");
  const std::string executor =
      box.write_policy("run_plan.py", source_file("examples/python/run_plan.py"));
  const auto planned = box.host_command(
      {zpolicy_binary(), "plan", "--format", "json", "--", "/bin/sh", "-c",
       "echo pwned > /proc/self/fd/0; cat; cd /proc/self/fd/0 && echo x > planted"});
  RunSpec spec;
  spec.launcher = {"/usr/bin/python3", executor, box.write_policy("plan.json", planned.out)};
  spec.stdin_fd = open((outside + "/task.sh").c_str(), O_RDONLY | O_CLOEXEC);
  BOOST_REQUIRE(spec.stdin_fd >= 0);
  const RunResult file = box.run(spec);
  close(spec.stdin_fd);
  BOOST_CHECK_EQUAL(read_file(outside + "/task.sh").value_or(""), "echo task\n");
  BOOST_CHECK_MESSAGE(file.out.find("echo task") != std::string::npos, file.describe());
  spec.stdin_fd = open(outside.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  BOOST_REQUIRE(spec.stdin_fd >= 0);
  const RunResult dir = box.run(spec);
  close(spec.stdin_fd);
  BOOST_CHECK_MESSAGE(dir.exit_code != 0, dir.describe());
  BOOST_CHECK(!exists(outside + "/planted"));
}

// R7-E1: the command's environment was the backend's. bwrap starts on the host, outside
// the sandbox it is about to make, and the dynamic loader acted on LD_PRELOAD /
// LD_LIBRARY_PATH / LD_AUDIT of the command's environment before any confinement: a
// library an earlier sandbox planted in the workspace ran on the host as the caller. Now
// bwrap starts with no environment and hands the command its own (--args, --setenv), so
// the same library, under the same spellings, runs in the sandbox only: the runs succeed.
BOOST_DATA_TEST_CASE(the_commands_loader_environment_never_runs_code_outside_the_sandbox,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string out = box.base() + "/out";
  box.make_dir(out);
  const std::string source =
      "#include <stdio.h>\n__attribute__((constructor)) static void p(void) { FILE* f = "
      "fopen(\"" + out + "/host\", \"w\"); if (f) fclose(f); }\n";
  RunSpec plant;
  plant.command = {"/bin/sh", "-c",
                   "mkdir -p lib && printf '%s' '" + source + "' > lib/p.c && "
                   "/usr/bin/gcc -shared -fPIC -o lib/p.so lib/p.c"};
  const RunResult planted = box.run(plant);
  BOOST_REQUIRE_MESSAGE(planted.exit_code == 0, planted.describe());
  box.host_command({"/bin/ln", "-s", box.ws("lib"), out + "/via-link"});
  for (const std::string& env : std::vector<std::string>{
           "LD_PRELOAD=" + box.ws("lib/p.so"), "LD_PRELOAD=" + out + "/via-link/p.so",
           "LD_LIBRARY_PATH=/usr/local/lib:" + box.ws("lib"), "LD_LIBRARY_PATH=:/usr/local/lib",
           "LD_AUDIT=lib/p.so", "LD_LIBRARY_PATH=/nonexistent-r7:/usr/local/lib"}) {
    RunSpec spec;
    spec.options = {"--env", env};
    spec.command = {"/bin/true"};
    const RunResult r = box.run(spec);
    BOOST_CHECK_MESSAGE(r.exit_code == 0, env << ": " << r.describe());
    BOOST_CHECK_MESSAGE(!exists(out + "/host"), env << ": the planted library ran on the host");
  }
}

// R7-E1, the class: every loader variable, whatever it names. The fail-closed refusal
// that came first looked only at LD_PRELOAD, LD_LIBRARY_PATH and LD_AUDIT naming a
// writable root; a library anywhere else the caller can be led to name (another run's
// workspace, a shared directory), a bare LD_PRELOAD name found on a LD_LIBRARY_PATH
// outside the roots, and the loader's other variables (LD_DEBUG_OUTPUT writes a file
// wherever it says) still acted in bwrap on the host. The library here lies outside every
// writable root and writes `out/host` (writable on the host only) and appends the program
// it runs in to the workspace's `loaded`: the command must load it, bwrap never. Through
// --env, a policy's env.set (also run in process through the C API), and a plan run by an
// independent executor.
BOOST_DATA_TEST_CASE(no_loader_variable_reaches_bwrap_on_the_host, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string out = box.base() + "/out", lib = box.base() + "/lib";
  box.make_dir(out);
  box.make_dir(lib);
  box.write_file(lib + "/p.c",
                 "#include <stdio.h>\n#include <unistd.h>\n"
                 "unsigned int la_version(unsigned int v) { return v; }\n"
                 "__attribute__((constructor)) static void p(void) {\n"
                 "  char exe[256] = \"?\"; ssize_t n = readlink(\"/proc/self/exe\", exe, 255);\n"
                 "  if (n > 0) exe[n] = 0;\n"
                 "  FILE* f = fopen(\"" + out + "/host\", \"a\"); if (f) { fprintf(f, \"%s\\n\", exe); fclose(f); }\n"
                 "  FILE* g = fopen(\"" + box.ws("loaded") + "\", \"a\"); if (g) { fprintf(g, \"%s\\n\", exe); fclose(g); }\n"
                 "}\n");
  box.host_command({"/usr/bin/gcc", "-shared", "-fPIC", "-o", lib + "/p.so", lib + "/p.c"});
  box.host_command({"/bin/cp", lib + "/p.so", lib + "/libzpolicy-kt.so"});
  const std::string policy = box.write_policy(
      "loader.yaml", "zpolicy: 1\nmode: workspace-write\nprocess:\n  env:\n    keep: [PATH]\n"
                     "    set: {LD_PRELOAD: \"" + lib + "/p.so\"}\n");
  struct Case {
    std::string name;
    std::vector<std::string> options;
    bool loads;  // the command itself loads the library
    std::vector<std::string> launcher = {};
  };
  const std::vector<Case> cases{
      {"LD_PRELOAD outside the writable roots", {"--env", "LD_PRELOAD=" + lib + "/p.so"}, true},
      {"LD_AUDIT outside the writable roots", {"--env", "LD_AUDIT=" + lib + "/p.so"}, true},
      {"a bare LD_PRELOAD name on LD_LIBRARY_PATH",
       {"--env", "LD_PRELOAD=libzpolicy-kt.so", "--env", "LD_LIBRARY_PATH=" + lib}, true},
      {"LD_DEBUG_OUTPUT", {"--env", "LD_DEBUG=libs", "--env", "LD_DEBUG_OUTPUT=" + out + "/debug"}, false},
      {"a policy's env.set", {"--policy", policy}, true},
      {"a policy's env.set, run in process (C API)", {"--policy", policy}, true, {embedder_binary()}},
  };
  for (const auto& c : cases) {
    RunSpec spec;
    spec.options = c.options;
    spec.launcher = c.launcher;
    spec.command = {"/bin/sh", "-c", "exec /bin/true"};
    const RunResult r = box.run(spec);
    BOOST_CHECK_MESSAGE(r.exit_code == 0, c.name << ": " << r.describe());
    BOOST_CHECK_MESSAGE(!exists(out + "/host"), c.name << ": the loader acted on the host in "
                                                       << read_file(out + "/host").value_or(""));
    const std::string loaded = read_file(box.ws("loaded")).value_or("");
    BOOST_CHECK_MESSAGE(loaded.find("bwrap") == std::string::npos, c.name << ": " << loaded);
    BOOST_CHECK_MESSAGE(!c.loads || loaded.find("/bin/dash\n") != std::string::npos ||
                            loaded.find("/bin/true\n") != std::string::npos,
                        c.name << ": the command did not get the variable: " << loaded);
    const RunResult listing = box.host_command({"/bin/ls", out});
    BOOST_CHECK_MESSAGE(listing.out.empty(), c.name << ": the loader wrote on the host: " << listing.out);
    box.host_command({"/bin/rm", "-f", out + "/host", box.ws("loaded")});
  }
  // The environment goes to bwrap as NUL-separated arguments: a NUL in a value (a policy's
  // YAML can hold one) would end it there and start a bwrap option of the policy's choosing
  // (here a writable bind of the host's root). Refused before anything starts.
  const std::string injecting = box.write_policy(
      "nul.yaml", "zpolicy: 1\nmode: workspace-write\nprocess:\n  env:\n    keep: [PATH]\n"
                  "    set: {X: \"a\\0--bind\\0/\\0/hostroot\"}\n");
  RunSpec nul;
  nul.options = {"--policy", injecting};
  nul.command = {"/bin/sh", "-c", "touch /hostroot" + out + "/escaped"};
  const RunResult refused = box.run(nul);
  BOOST_CHECK_MESSAGE(refused.exit_code == 2 && refused.err.find("holds a NUL") != std::string::npos &&
                          refused.err.find("nothing ran") != std::string::npos,
                      refused.describe());
  BOOST_CHECK(!exists(out + "/escaped"));
  // The plan says the same: bwrap starts with no environment, the command's goes through
  // --args; an executor written from docs/embedding.md alone keeps it off the host too.
  const std::string executor = box.write_policy("run_plan.py", source_file("examples/python/run_plan.py"));
  auto planned = box.host_command({zpolicy_binary(), "plan", "--format", "json", "--env",
                                   "LD_PRELOAD=" + lib + "/p.so", "--", "/bin/true"});
  BOOST_CHECK(planned.out.find("\"exe_env\": []") != std::string::npos);
  const std::string plan = box.write_policy("plan.json", planned.out);
  auto ran = box.host_command({"/usr/bin/python3", executor, plan});
  BOOST_CHECK_MESSAGE(!exists(out + "/host"), "executor: " << read_file(out + "/host").value_or(""));
  BOOST_CHECK_MESSAGE(read_file(box.ws("loaded")).value_or("").find("/bin/true\n") != std::string::npos,
                      "executor: the command did not get the variable: " << ran.describe());
}

// R7-E1, the way the environment now travels (an attack on the fix): the command's
// variables are bwrap arguments in the --args data, so a name or value shaped like a bwrap
// option (`X=--bind`, a kept `X--bind=/`) must stay a variable and mount nothing, and the
// values must stay off bwrap's command line and environment, which the host shows every
// local user (`ps`, /proc/PID/cmdline) or the caller's other processes (/proc/PID/environ).
BOOST_DATA_TEST_CASE(the_commands_environment_is_data_and_stays_off_bwraps_command_line,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string token = "zpkt-token-" + unique_token();
  const std::string policy = box.write_policy(
      "shapes.yaml", "zpolicy: 1\nmode: workspace-write\nprocess:\n  env:\n"
                     "    keep: [PATH, \"ZPKT*\"]\n    set: {ZPKT_SET: \"--ro-bind\"}\n");
  RunSpec spec;
  spec.options = {"--policy", policy, "--env", "ZPKT_TOKEN=" + token};
  // The shell's own environment as bwrap exec'd it (dash drops names like ZPKT--bind).
  spec.extra_env = {"ZPKT=--bind", "ZPKT--bind=/", "ZPKT_EMPTY="};
  spec.command = {"/bin/sh", "-c",
                  "tr '\\0' '\\n' < /proc/$$/environ > env.txt; touch " + box.base() +
                      "/escaped; touch up; sleep 3"};
  Running r = box.start(spec);
  BOOST_REQUIRE(wait_until([&] { return exists(box.ws("up")); }, std::chrono::seconds(15)));
  const pid_t init = sandbox_init(r.pid);
  BOOST_REQUIRE(init != 0);
  for (const pid_t bwrap : {parent_of(init), init})
    for (const char* file : {"cmdline", "environ"}) {
      const std::string shown =
          read_file("/proc/" + std::to_string(bwrap) + "/" + file).value_or("");
      BOOST_CHECK_MESSAGE(shown.find(token) == std::string::npos,
                          "bwrap's " << file << " shows the command's variable");
      if (std::string(file) == "environ") BOOST_CHECK_MESSAGE(shown.empty(), "bwrap's environment: " << shown);
    }
  const RunResult done = box.finish(r);
  BOOST_CHECK_MESSAGE(done.exit_code == 0, done.describe());
  const std::string env = "\n" + read_file(box.ws("env.txt")).value_or("");
  for (const std::string& line :
       std::vector<std::string>{"ZPKT=--bind", "ZPKT--bind=/", "ZPKT_EMPTY=", "ZPKT_SET=--ro-bind",
                                "ZPKT_TOKEN=" + token})
    BOOST_CHECK_MESSAGE(env.find("\n" + line + "\n") != std::string::npos, line << " missing:" << env);
  BOOST_CHECK_MESSAGE(!exists(box.base() + "/escaped"), "an environment entry became a bind");
}

// R7-D1: the caller's standard descriptors are the host's open files. A file given on
// stdin (`zpolicy run -- sh < ../task.sh`), opened read-only, could be opened again for
// writing through /proc/self/fd/0, which leads to the object on the host's writable mount;
// a directory on stdin was a way into the host's tree. Now a file on stdin is a sealed
// copy, a file on stdout a pipe zpolicy copies into it, and a directory is refused.
BOOST_DATA_TEST_CASE(the_callers_stdin_gives_the_sandbox_no_more_than_reading_it,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string outside = box.base() + "/outside";
  box.make_dir(outside);
  box.write_file(outside + "/task.sh", "echo task\n");
  RunSpec spec;
  spec.command = {"/bin/sh", "-c", "echo pwned > /proc/self/fd/0"};
  spec.stdin_fd = open((outside + "/task.sh").c_str(), O_RDONLY | O_CLOEXEC);
  BOOST_REQUIRE(spec.stdin_fd >= 0);
  const RunResult file = box.run(spec);
  close(spec.stdin_fd);
  BOOST_CHECK_MESSAGE(file.exit_code != 0, file.describe());
  BOOST_CHECK_EQUAL(read_file(outside + "/task.sh").value_or(""), "echo task\n");
  // The copy is what the command reads: the script runs, from the file's offset.
  spec.command = {"/bin/sh", "-s"};
  spec.stdin_fd = open((outside + "/task.sh").c_str(), O_RDONLY | O_CLOEXEC);
  const RunResult script = box.run(spec);
  close(spec.stdin_fd);
  BOOST_CHECK_MESSAGE(script.exit_code == 0 && script.out == "task\n", script.describe());
  spec.command = {"/bin/sh", "-c", "cd /proc/self/fd/0 && echo x > planted"};
  spec.stdin_fd = open(outside.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  BOOST_REQUIRE(spec.stdin_fd >= 0);
  const RunResult dir = box.run(spec);
  close(spec.stdin_fd);
  BOOST_CHECK_MESSAGE(dir.exit_code == 2 && dir.err.find("stdin is a directory") != std::string::npos &&
                          dir.err.find("nothing ran") != std::string::npos,
                      dir.describe());
  BOOST_CHECK(!exists(outside + "/planted"));
}

// The same for a file on stdout (`>> log`): the command's output reaches it, through
// zpolicy's copy, and opening it again (`: > /proc/self/fd/1`) truncates nothing.
BOOST_DATA_TEST_CASE(a_file_on_stdout_gets_the_output_and_is_not_reopened, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string log = box.base() + "/log";
  box.write_file(log, "before\n", 0666);
  RunSpec spec;
  spec.command = {"/bin/sh", "-c", "echo line; : > /proc/self/fd/1; echo end"};
  spec.root_prefix = {"/bin/sh", "-c", "exec \"$@\" >> '" + log + "'", "sh"};
  const RunResult r = box.run(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 0, r.describe());
  BOOST_CHECK_EQUAL(read_file(log).value_or(""), "before\nline\nend\n");
}

// R16-1, R16-2: the sandbox holds the host's device nodes, on writable mounts: bwrap's
// /dev/null (the stage gave the six devices a writable mount each) and a /dev/null on
// stdin (the caller's own open file, on the host's devtmpfs). A sandbox started by root
// owns the node: `chmod 000 /dev/null` made the host's /dev/null unusable for everyone;
// any sandbox set its times (`touch`, write access is enough). The host's /dev/null is a
// scratch node (1:3) bound over it in a mount namespace of the run's own, and stdin and
// stderr; it must come out as it went in, while reads and writes work as ever.
BOOST_DATA_TEST_CASE(the_sandbox_changes_no_host_device_node_it_holds, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.make_dir(box.base() + "/dev");
  const std::string stat_node = "stat -c '%a %u:%g m%Y c%.9Z' \"$b/dev/null\"";
  RunSpec spec;
  spec.root_prefix = in_private_mount_namespace(
      "b=$1; shift; mount -t tmpfs -o mode=755 scratch \"$b/dev\" && "
      "mknod -m 666 \"$b/dev/null\" c 1 3 && mount --bind \"$b/dev/null\" /dev/null && " +
          stat_node + " > \"$b/before\" || exit 99; \"$@\" < /dev/null 2> /dev/null; rc=$?; " + stat_node +
          " > \"$b/after\"; exit $rc",
      {box.base()});
  spec.command = {"/bin/sh", "-c",
                  kChangeNode +
                      "; echo x > /dev/null && echo x >> /dev/null && w=ok; "
                      "echo \"w=$w r=$(wc -c < /proc/self/fd/0) z=$(head -c 4 /dev/zero | wc -c)\"",
                  "sh", "/dev/null", "0 2"};
  const RunResult r = box.run(spec);
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out == "w=ok r=0 z=4\n", r.describe());
  const std::string before = read_file(box.base() + "/before").value_or("none");
  BOOST_TEST(read_file(box.base() + "/after").value_or("none") == before,
             "the sandbox changed the host's /dev/null, which was " << before << "\n"
                                                                   << r.describe());
}

// R16-2 with a terminal: the caller's pty on stdin and stderr, the caller's own (as a
// login's is). `chmod 666 /proc/self/fd/0` made it writable to every local user (who could
// then write text and escape sequences to the caller's screen). The command still reads
// what is typed and writes to the screen.
BOOST_DATA_TEST_CASE(the_sandbox_changes_not_the_callers_terminal, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  Pty pty;
  if (caller == Caller::Nobody) BOOST_TEST_REQUIRE(fchown(pty.slave, 65534, -1) == 0);
  struct stat st;
  BOOST_TEST_REQUIRE(fstat(pty.slave, &st) == 0);
  const std::string before = node_attributes(st);
  const char* name = ttyname(pty.slave);
  BOOST_TEST_REQUIRE(name != nullptr);
  BOOST_TEST_REQUIRE(write(pty.master, "typed\n", 6) == 6);
  RunSpec spec;
  spec.stdin_fd = pty.slave;
  spec.root_prefix = {"/bin/sh", "-c", "exec \"$@\" 2>&0", "sh"};
  spec.command = {"/bin/sh", "-c",
                  "{ " + kChangeNode + "; } 2>/dev/null; read line; echo \"$line\" > got; echo shown >&2",
                  "sh", name, "0 2"};
  const RunResult r = box.run(spec);
  const std::string screen = drain(pty.master);
  BOOST_TEST(r.exit_code == 0, r.describe() << "terminal: " << screen);
  BOOST_TEST(read_file(box.ws("got")).value_or("") == "typed\n");
  BOOST_TEST(screen.find("shown") != std::string::npos, "terminal: " << screen);
  BOOST_TEST_REQUIRE(fstat(pty.slave, &st) == 0);
  // A write to a terminal sets its times to now: only a time set back counts.
  BOOST_TEST(st.st_mtim.tv_sec > 1'000'000'000, "the sandbox set the terminal's time");
  st.st_mtim = {};
  const std::string after = node_attributes(st);
  BOOST_TEST(after.substr(0, after.find(" m")) == before.substr(0, before.find(" m")),
             "the sandbox changed the caller's terminal: " << before << " -> " << after);
  BOOST_TEST(after.substr(after.find(" c")) == before.substr(before.find(" c")),
             "the sandbox changed the caller's terminal: " << before << " -> " << after);
}

// A terminal of the caller's that cannot be opened again at its name (there, another node)
// is refused: the caller's own file would let the sandbox change it. Nothing runs.
BOOST_DATA_TEST_CASE(a_terminal_not_found_at_its_name_is_refused, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  Pty pty;
  if (caller == Caller::Nobody) BOOST_TEST_REQUIRE(fchown(pty.slave, 65534, -1) == 0);
  const char* name = ttyname(pty.slave);
  BOOST_TEST_REQUIRE(name != nullptr);
  RunSpec spec;
  spec.stdin_fd = pty.slave;
  spec.root_prefix =
      in_private_mount_namespace("p=$1; shift; mount --bind /dev/null \"$p\" && exec \"$@\"", {name});
  spec.command = {"/bin/sh", "-c", "touch ran"};
  const RunResult r = box.run(spec);
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(r.err.find("cannot hand the sandbox stdin through a read-only mount") != std::string::npos,
             r.describe());
  BOOST_TEST(!exists(box.ws("ran")));
}

// R16B-1: /dev/tty names the opener's controlling terminal. The caller's stdin is /dev/tty
// opened while terminal A was its session's, and zpolicy runs in a session whose terminal
// is B: opened again in the guard's child, /dev/tty was B, and the sandbox read what was
// typed on B, a terminal no stream of the caller's was. The terminal opened again must be
// the caller's: as root (the node is root's, so the caller's file may not pass) the run is
// refused; as nobody the caller's own file passes (A).
BOOST_DATA_TEST_CASE(dev_tty_on_stdin_is_the_terminal_it_was_opened_on, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  Pty a, b;
  const char* b_name = ttyname(b.slave);
  BOOST_TEST_REQUIRE(b_name != nullptr);
  BOOST_TEST_REQUIRE(write(a.master, "fromA\n", 6) == 6);
  BOOST_TEST_REQUIRE(write(b.master, "fromB\n", 6) == 6);
  RunSpec spec;
  spec.stdin_fd = a.slave;
  // A session with A as its terminal opens /dev/tty (3); a session of its own with B as
  // its terminal runs zpolicy with that file on stdin.
  spec.root_prefix = {"/usr/bin/setsid", "-w", "-c", "/bin/sh", "-c",
                      "exec 3</dev/tty && exec /usr/bin/setsid -w -c /bin/sh -c "
                      "'exec \"$@\" <&3 3<&-' sh \"$@\" < \"$0\"",
                      b_name};
  spec.command = {"/bin/sh", "-c", "read line; echo \"$line\" > got"};
  const RunResult r = box.run(spec);
  BOOST_TEST(read_file(box.ws("got")).value_or("") != "fromB\n",
             "the sandbox read the runner's terminal, not the caller's\n" << r.describe());
  if (caller == Caller::Root) {
    BOOST_TEST(r.exit_code == 125, r.describe());
    BOOST_TEST(r.err.find("opens another terminal here") != std::string::npos, r.describe());
  } else {
    BOOST_TEST(r.exit_code == 0, r.describe());
    BOOST_TEST(read_file(box.ws("got")).value_or("") == "fromA\n", r.describe());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
