#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "sandbox_fixture.hpp"

// Issue 14 §1: `run` executes only what `compile --workspace` would produce and verify,
// and refuses (exit 3, before anything starts) on any verifier finding or error-level
// lint; `--accept` takes a lint, never a finding. Every refusal is checked on the host:
// the file the command would have written is not there, or unchanged.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

const char* kEvil = "echo evil-from-the-sandbox\n";

RunSpec append_to(const std::string& file, const std::string& cwd,
                  std::vector<std::string> options = {}) {
  RunSpec spec;
  spec.cwd = cwd;
  spec.options = std::move(options);
  spec.command = {"/bin/sh", "-c", std::string("printf '") + kEvil + "' >> '" + file + "'"};
  return spec;
}

bool names_lint(const RunResult& r, const std::string& id) {
  return r.err.find("[" + id + "]") != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_run_refusals)

BOOST_DATA_TEST_CASE(workspace_root_is_refused_and_writes_nothing, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string marker = "/zpolicy-kt-" + unique_token();
  box.remove_later(marker);
  // The current directory and --workspace: refused by the lints (ZP003, ZP005, ZP013).
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
      {"/", {}},
      {box.workspace(), {"--workspace", "/"}},
  };
  for (const auto& [cwd, options] : cases) {
    RunSpec spec;
    spec.cwd = cwd;
    spec.options = options;
    spec.command = {"/usr/bin/touch", marker};
    auto r = box.run(spec);
    BOOST_TEST(r.exit_code == 3, cwd << "\n" << r.describe());
    BOOST_TEST(r.err.find("nothing ran") != std::string::npos, r.describe());
    BOOST_TEST(!exists(marker), cwd << ": the host file was created");
  }
  // Every lint accepted, it is still refused: by resolution (the `**/.git` pattern cannot
  // be checked under the host's /proc, exit 2) or by the verifier (the host's /proc, /dev
  // and /tmp as the sandbox's, exit 3); neither can be accepted.
  RunSpec spec;
  spec.cwd = "/";
  spec.options = {"--accept", "ZP003", "--accept", "ZP005", "--accept", "ZP013"};
  spec.command = {"/usr/bin/touch", marker};
  spec.limit = std::chrono::seconds(120);
  auto r = box.run(spec);
  BOOST_TEST((r.exit_code == 2 || r.exit_code == 3), r.describe());
  BOOST_TEST(!exists(marker), "the host file was created with every lint accepted");
}

BOOST_DATA_TEST_CASE(home_as_workspace_is_refused_unless_zp003_is_accepted, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string bashrc = box.home() + "/.bashrc";
  box.write_file(bashrc, "# the user's own\n");
  const std::string before = snapshot(box.home());
  auto r = box.run(append_to(bashrc, box.home()));
  BOOST_TEST(r.exit_code == 3, r.describe());
  BOOST_TEST(names_lint(r, "ZP003"), r.describe());
  BOOST_TEST(r.err.find("<default-policy>:") != std::string::npos, "no policy location\n" << r.describe());
  BOOST_TEST(snapshot(box.home()) == before, "the home directory changed");

  // Positive control: accepting exactly that lint runs the command, which shows the
  // refusal above was the lint's doing.
  auto accepted = box.run(append_to(bashrc, box.home(), {"--accept", "ZP003"}));
  BOOST_TEST(accepted.exit_code == 0, accepted.describe());
  BOOST_TEST(read_file(bashrc).value_or("") == std::string("# the user's own\n") + kEvil);
}

BOOST_DATA_TEST_CASE(every_workspace_that_holds_or_lies_in_startup_files_or_credentials_is_refused,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  // Each directory is made the workspace in turn, with a file the command would change.
  const std::vector<std::pair<std::string, std::string>> members{
      {box.base(), "home/.zshenv"},  // an ancestor of $HOME
      {box.home() + "/.config", "fish/config.fish"},
      {box.home() + "/.config/fish/conf.d", "evil.fish"},
      {box.home() + "/.config/systemd", "user/evil.service"},
      {box.home() + "/.ssh", "authorized_keys"},
      {box.home() + "/.gnupg", "gpg.conf"},
      {box.home() + "/.aws", "credentials"},
      {box.home() + "/.kube", "config"},
      {box.home() + "/.docker", "config.json"},
      {box.home() + "/.config/gh", "hosts.yml"},
      {box.home() + "/.local/bin", "git"},
  };
  for (const auto& [dir, file] : members) {
    box.write_file(dir + "/" + file, "original\n");
    const std::string before = snapshot(box.base());
    auto r = box.run(append_to(dir + "/" + file, dir));
    BOOST_TEST(r.exit_code == 3, dir << "\n" << r.describe());
    BOOST_TEST(names_lint(r, "ZP003"), dir << "\n" << r.describe());
    BOOST_TEST(snapshot(box.base()) == before, dir << ": something changed on the host");
  }
  // Control: an ordinary project directory next to them runs.
  auto ok = box.run(append_to(box.ws("notes.txt"), box.workspace()));
  BOOST_TEST(ok.exit_code == 0, ok.describe());
}

BOOST_DATA_TEST_CASE(a_home_reached_through_a_symlink_is_still_the_home, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string link = box.base() + "/home-link";
  std::filesystem::create_symlink(box.home(), link);
  const std::string bashrc = box.home() + "/.bash_login";
  box.write_file(bashrc, "original\n");
  RunSpec spec = append_to(bashrc, box.home());
  spec.extra_env = {"HOME=" + link};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 3, r.describe());
  BOOST_TEST(names_lint(r, "ZP003"), r.describe());
  BOOST_TEST(read_file(bashrc).value_or("") == "original\n");
}

BOOST_DATA_TEST_CASE(a_policy_the_sandbox_could_rewrite_is_refused_unless_zp004_is_accepted,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string text = "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: [\"${WORKSPACE}\"]\n";
  const std::string outside = box.write_policy("outside.yaml", text);
  box.write_file(box.ws("policy.yaml"), text);
  box.make_dir(box.ws("sub"));
  box.write_file(box.ws("sub/deep.yaml"), text);
  // A link in the workspace on the way to a policy that lies outside it: the sandbox
  // could point the link at a policy of its own for the next run.
  std::filesystem::create_symlink(box.base(), box.ws("via-link"));
  const std::string marker = box.ws("MARKER");
  for (const std::string& policy : {box.ws("policy.yaml"), std::string("sub/deep.yaml"),
                                    box.ws("via-link/outside.yaml")}) {
    RunSpec spec;
    spec.options = {"--policy", policy};
    spec.command = {"/usr/bin/touch", marker};
    auto r = box.run(spec);
    BOOST_TEST(r.exit_code == 3, policy << "\n" << r.describe());
    BOOST_TEST(names_lint(r, "ZP004"), policy << "\n" << r.describe());
    BOOST_TEST(!exists(marker), policy << ": the command ran");
  }
  RunSpec spec;
  spec.command = {"/usr/bin/touch", marker};
  spec.options = {"--policy", outside};
  auto control = box.run(spec);
  BOOST_TEST(control.exit_code == 0, control.describe());
  BOOST_TEST(exists(marker));
  std::filesystem::remove(marker);
  spec.options = {"--policy", box.ws("policy.yaml"), "--accept", "ZP004"};
  auto accepted = box.run(spec);
  BOOST_TEST(accepted.exit_code == 0, accepted.describe());
  BOOST_TEST(exists(marker));
}

BOOST_DATA_TEST_CASE(the_zpolicy_binary_in_a_writable_root_is_refused, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string dir = zpolicy_binary().substr(0, zpolicy_binary().rfind('/'));
  RunSpec spec;
  spec.cwd = dir;
  spec.command = {"/bin/true"};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 3, r.describe());
  BOOST_TEST(names_lint(r, "ZP005"), r.describe());
}

BOOST_DATA_TEST_CASE(a_workspace_in_a_system_directory_is_refused_unless_zp013_is_accepted,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  for (const std::string dir : {"/usr/local/bin", "/etc", "/usr/lib"}) {
    RunSpec spec;
    spec.cwd = dir;
    spec.command = {"/bin/true"};
    auto r = box.run(spec);
    BOOST_TEST(r.exit_code == 3, dir << "\n" << r.describe());
    BOOST_TEST(names_lint(r, "ZP013"), dir << "\n" << r.describe());
  }
  // Accepted, both run there: root with its placeholders; nobody, who cannot create them,
  // with /usr/local/bin read-only as a whole (red team H17-12: it failed with exit 125).
  // /usr/local/bin is on the caller's PATH too (ZP003): both must be named.
  RunSpec spec;
  spec.cwd = "/usr/local/bin";
  spec.options = {"--accept", "ZP013", "--accept", "ZP003"};
  spec.command = {"/bin/true"};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(!exists("/usr/local/bin/.env"), "a placeholder was left behind");
}

// Red team R6-W1: `cd /tmp && zpolicy run` ran with the host's /tmp as the workspace.
// A writable root that is (or holds) a directory every user shares is refused (ZP013),
// by name and, bound, by its mode (sticky, world-writable); a directory of the run's own
// below one runs; a policy that writes a shared directory on purpose runs when accepted.
BOOST_DATA_TEST_CASE(a_shared_directory_as_a_writable_root_is_refused_unless_zp013_is_accepted,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string marker = "zpolicy-kt-" + unique_token();
  const std::string scratch = box.base() + "/scratch";
  BOOST_REQUIRE(::mkdir(scratch.c_str(), 01777) == 0 && ::chmod(scratch.c_str(), 01777) == 0);
  const std::string writes_scratch = box.write_policy(
      "scratch.yaml", "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: [\"${WORKSPACE}\", \"" +
                          scratch + "\"]\n");
  const std::vector<std::pair<std::string, std::vector<std::string>>> refused{
      {"/tmp", {}},
      {box.workspace(), {"--workspace", "/var/tmp"}},
      {box.workspace(), {"--workspace", "/dev/shm"}},
      {box.workspace(), {"--workspace", scratch}},
      {box.workspace(), {"--policy", writes_scratch}},
  };
  for (const auto& [cwd, options] : refused) {
    RunSpec spec = append_to(marker, cwd, options);
    auto r = box.run(spec);
    const std::string where = cwd + " " + (options.empty() ? "" : options.back());
    BOOST_TEST(r.exit_code == 3, where << "\n" << r.describe());
    BOOST_TEST(names_lint(r, "ZP013"), where << "\n" << r.describe());
    BOOST_TEST(r.err.find("every user shares") != std::string::npos, r.describe());
    for (const std::string& dir : {std::string("/tmp"), std::string("/var/tmp"), std::string("/dev/shm"), scratch})
      BOOST_TEST(!exists(dir + "/" + marker), where << ": written in " << dir);
  }
  // Below a shared directory, the run's own directory (what `mktemp -d` gives) runs.
  const std::string own = scratch + "/own";
  box.make_dir(own);
  auto below = box.run(append_to(marker, own));
  BOOST_TEST(below.exit_code == 0, below.describe());
  BOOST_TEST(exists(own + "/" + marker));
  // Accepted on the command line, the policy that writes the shared directory runs.
  RunSpec accepted;
  accepted.options = {"--policy", writes_scratch, "--accept", "ZP013"};
  accepted.command = {"/bin/sh", "-c", "echo kept > " + scratch + "/" + marker};
  auto r = box.run(accepted);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(read_file(scratch + "/" + marker).value_or("") == "kept\n");
}

BOOST_DATA_TEST_CASE(git_pointer_files_naming_hidden_host_paths_are_refused, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string host_tmp = "/tmp/zpolicy-kt-gitdir-" + unique_token();
  box.make_dir(host_tmp);
  box.remove_later(host_tmp);
  const std::string marker = box.ws("MARKER");
  for (const std::string& gitdir : {std::string("/proc/1"), host_tmp, std::string("/dev/shm")}) {
    box.write_file(box.ws(".git"), "gitdir: " + gitdir + "\n");
    RunSpec spec;
    spec.command = {"/usr/bin/touch", marker};
    auto r = box.run(spec);
    BOOST_TEST(r.exit_code == 3, gitdir << "\n" << r.describe());
    BOOST_TEST(r.err.find("linux: ") != std::string::npos, gitdir << "\n" << r.describe());
    BOOST_TEST(!exists(marker), gitdir << ": the command ran");
  }
  // A worktree's pointer into the workspace itself runs, its git directory read-only.
  box.make_dir(box.ws("real-gitdir"));
  box.write_file(box.ws(".git"), "gitdir: " + box.ws("real-gitdir") + "\n");
  auto r = box.sh("touch " + marker + "; touch real-gitdir/planted 2>/dev/null; true");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(exists(marker));
  BOOST_TEST(!exists(box.ws("real-gitdir/planted")));
}

BOOST_DATA_TEST_CASE(accept_takes_only_acceptable_lint_ids, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string marker = box.ws("MARKER");
  for (const char* id : {"dropped-deny", "verify-linux", "missing-hardening", "ZP999", "zp003",
                                "ZP001", "ZP009", "ZP100", ""}) {
    RunSpec spec;
    spec.options = {"--accept", id};
    spec.command = {"/usr/bin/touch", marker};
    auto r = box.run(spec);
    BOOST_TEST(r.exit_code == 2, "'" << id << "'\n" << r.describe());
    BOOST_TEST(!exists(marker), id << ": the command ran");
  }
  // Accepting a lint that does not fire changes nothing.
  RunSpec spec;
  spec.options = {"--accept", "ZP003", "--accept", "ZP004", "--accept", "ZP005"};
  spec.command = {"/usr/bin/touch", marker};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(exists(marker));
}

BOOST_DATA_TEST_CASE(danger_full_access_and_read_only_still_behave, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string danger = box.write_policy("danger.yaml", "zpolicy: 1\nmode: danger-full-access\n");
  // danger-full-access is the explicit opt-out: no sandbox, so nothing to verify.
  const std::string outside = box.base() + "/outside";
  box.make_dir(outside);
  RunSpec spec;
  spec.options = {"--policy", danger};
  spec.command = {"/usr/bin/touch", outside + "/written"};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(exists(outside + "/written"));
  // --mode read-only narrows it and is verified: the home as workspace is then harmless
  // (nothing writable), so the lint does not refuse, and the write fails inside.
  spec.options = {"--policy", danger, "--mode", "read-only"};
  spec.cwd = box.home();
  spec.command = {"/bin/sh", "-c", "echo x >> .profile"};
  const std::string before = snapshot(box.home());
  auto ro = box.run(spec);
  BOOST_TEST(ro.exit_code != 0, ro.describe());
  BOOST_TEST(ro.exit_code != 3, ro.describe());
  BOOST_TEST(snapshot(box.home()) == before);
}

// zpolicy installed set-user-id (or embedded in a set-id program) would choose the real
// user's state directory and records and create them, and start bwrap, as the effective
// user. Refused before anything starts, and never run unconfined in its place. The copy is
// owned by the other caller: nobody runs a set-user-id-root zpolicy, root one set to nobody;
// then nobody runs a copy with a file capability.
BOOST_DATA_TEST_CASE(a_set_id_zpolicy_refuses_to_run, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string copy = box.base() + "/zpolicy-set-id";
  std::filesystem::copy_file(zpolicy_binary(), copy);
  const uid_t owner = caller == Caller::Root ? 65534 : 0;
  BOOST_TEST_REQUIRE(::chown(copy.c_str(), owner, owner) == 0);
  BOOST_TEST_REQUIRE(::chmod(copy.c_str(), 06755) == 0);
  const std::string marker = box.ws("ran");
  RunSpec spec;
  spec.launcher = {copy, "run"};
  spec.command = {"/usr/bin/touch", marker};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code == 125, r.describe());
  BOOST_TEST(r.err.find("set-user-id or set-group-id") != std::string::npos, r.describe());
  // One identity, with a file capability (CAP_NET_BIND_SERVICE, permitted and effective):
  // the start gave nobody what it lacks.
  if (caller == Caller::Nobody) {
    BOOST_TEST_REQUIRE(::chown(copy.c_str(), 0, 0) == 0);
    BOOST_TEST_REQUIRE(::chmod(copy.c_str(), 0755) == 0);
    const uint32_t cap[5] = {VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE,
                             1u << CAP_NET_BIND_SERVICE, 0, 0, 0};
    BOOST_TEST_REQUIRE(::setxattr(copy.c_str(), "security.capability", cap, sizeof cap, 0) == 0);
    auto caps = box.run(spec);
    BOOST_TEST(caps.exit_code == 125, caps.describe());
    BOOST_TEST(caps.err.find("file capabilities") != std::string::npos, caps.describe());
  }
  std::filesystem::remove(copy);
  BOOST_TEST(!exists(marker), "the command ran");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
