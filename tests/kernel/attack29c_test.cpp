#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "attack_steps.hpp"
#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Red team attack 29c (docs/redteam-2026-12.md "Attack 29c"): the filesystem promise of
// `zpolicy run` in the workspaces users have, with what the caller's shell exports. Each
// case runs as root and as uid 65534 and is judged from the host: the host's git in that
// shell runs nothing the command wrote.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// How the caller's shell gives git a setting: what `git -c` exports to what it runs, and the
// counted variables (CI runners, devcontainers).
struct ExportedSetting {
  const char* name;
  std::vector<std::string> (*env)(const std::string& key, const std::string& value);
};

const std::vector<ExportedSetting> kExportedSettings = {
    {"GIT_CONFIG_PARAMETERS",
     [](const std::string& key, const std::string& value) {
       return std::vector<std::string>{"GIT_CONFIG_PARAMETERS='" + key + "'='" + value + "'"};
     }},
    {"GIT_CONFIG_COUNT", [](const std::string& key, const std::string& value) {
       return std::vector<std::string>{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=" + key,
                                       "GIT_CONFIG_VALUE_0=" + value};
     }}};

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack29c)

// A29C-1: the caller's shell exports a git setting (`git -c include.path=…`, or the counted
// GIT_CONFIG_KEY_0/GIT_CONFIG_VALUE_0) including a host file outside the workspace, which says
// `core.hooksPath = .husky` and includes `WS/local.gitconfig` in turn. On main 4df5a8b the
// exported settings were only ZP003's, judged by their own value (the host file, outside every
// writable root): resolution never read them, so neither `.husky` nor `local.gitconfig` was
// protected; the command wrote a pre-commit hook and a `core.fsmonitor`, exit 0, and the host's
// `git status` and `git commit` in that shell ran both. Now the exported settings are read with
// every git directory's files, as an alias's `-c` settings: both are protected (placeholders),
// both writes fail, and the host's git runs nothing.
BOOST_DATA_TEST_CASE(exported_git_settings_are_read_as_git_reads_them,
                     bdata::make(kCallers) * bdata::make(std::vector<size_t>{0, 1}), caller, form) {
  Sandbox box(caller);
  const ExportedSetting& setting = kExportedSettings[form];
  box.host_command({kGit, "init", "-q", box.workspace()});
  commit_empty(box, box.workspace(), "i");
  const std::string team = box.home() + "/team.gitconfig", fsm = box.home() + "/fsm.sh";
  const std::string hook_ran = box.home() + "/hook-ran", fsm_ran = box.home() + "/fsm-ran";
  box.write_file(team, "[core]\n\thooksPath = .husky\n[include]\n\tpath = " +
                           box.ws("local.gitconfig") + "\n");
  box.write_file(fsm, "#!/bin/sh\necho PWNED > " + fsm_ran + "\n", 0755);
  const std::vector<std::string> env = setting.env("include.path", team);
  RunSpec spec;
  spec.extra_env = env;
  const RunResult r = run_script(box, spec,
                                 "mkdir -p .husky; " + hook(".husky/pre-commit", hook_ran) +
                                     "; printf '[core]\\n\\tfsmonitor = " + fsm +
                                     "\\n' > local.gitconfig; echo mine > other");
  const std::string what = std::string(setting.name) + ": " + r.describe();
  BOOST_TEST(r.completed(), what);
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", what);
  BOOST_TEST(!exists(box.ws(".husky/pre-commit")), what);
  BOOST_TEST(!read_file(box.ws("local.gitconfig")).has_value(), what);
  std::vector<std::string> host = {"/usr/bin/env"};
  host.insert(host.end(), env.begin(), env.end());
  for (const std::string s : {"/bin/sh", "-c",
                              "cd \"$1\" && git status >/dev/null 2>&1; git -c user.name=t -c "
                              "user.email=t@t.test commit -q --allow-empty -m x >/dev/null 2>&1; "
                              "true",
                              "sh"})
    host.push_back(s);
  host.push_back(box.workspace());
  box.host_command(host);
  BOOST_TEST(!exists(hook_ran), what);
  BOOST_TEST(!exists(fsm_ran), what);
}

// A29C-1, its plainest member: the exported setting is `core.hooksPath = .githooks` itself,
// relative to the top of whichever repository the caller's git runs in, and the run is
// started from outside the workspace (`--workspace WS` from its parent). ZP003 judged the
// value from the working directory only (`PARENT/.githooks`, outside every writable root): on
// main 4df5a8b the command wrote `.githooks/pre-commit`, exit 0, and the host's `git commit`
// in the workspace, in that shell, ran it. Now the setting is resolved against the
// workspace's repository's top as the global config's relative values are (R18-6).
BOOST_DATA_TEST_CASE(an_exported_relative_hooks_path_is_resolved_at_the_repositorys_top,
                     bdata::make(kCallers) * bdata::make(std::vector<size_t>{0, 1}), caller, form) {
  Sandbox box(caller);
  const ExportedSetting& setting = kExportedSettings[form];
  box.host_command({kGit, "init", "-q", box.workspace()});
  commit_empty(box, box.workspace(), "i");
  const std::string hook_ran = box.home() + "/hook-ran";
  const std::vector<std::string> env = setting.env("core.hooksPath", ".githooks");
  RunSpec spec;
  spec.extra_env = env;
  spec.cwd = box.home();
  spec.options = {"--workspace", box.workspace()};
  const RunResult r = run_script(
      box, spec,
      "mkdir -p .githooks; " + hook(".githooks/pre-commit", hook_ran) + "; echo mine > other");
  const std::string what = std::string(setting.name) + ": " + r.describe();
  BOOST_TEST(r.completed(), what);
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", what);
  BOOST_TEST(!exists(box.ws(".githooks/pre-commit")), what);
  std::vector<std::string> host = {"/usr/bin/env"};
  host.insert(host.end(), env.begin(), env.end());
  for (const std::string s : {"/bin/sh", "-c",
                              "cd \"$1\" && git -c user.name=t -c user.email=t@t.test commit -q "
                              "--allow-empty -m x >/dev/null 2>&1; true",
                              "sh"})
    host.push_back(s);
  host.push_back(box.workspace());
  box.host_command(host);
  BOOST_TEST(!exists(hook_ran), what);
}

// A29C-2: R18-7's list of the caller's variables whose value is a command lacked
// `GIT_PROXY_COMMAND` (git runs it for every git:// URL), the editors and pager of sudoedit and
// systemctl, make's `CC`/`CXX` and cargo's `RUSTC` and wrappers. On main 4df5a8b, with
// `GIT_PROXY_COMMAND=WS/tools/proxy` exported, the run went on, exit 0, the command wrote the
// proxy, and the host's `git ls-remote git://…` in that shell ran it (by hand); each of the
// others was passed by the same way. Now each refuses the run (ZP003, exit 3) before anything
// runs; the command's file is not there.
BOOST_DATA_TEST_CASE(exported_commands_naming_the_workspace_are_refused, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  for (const std::string variable :
       {"GIT_PROXY_COMMAND", "SUDO_EDITOR", "SYSTEMD_EDITOR", "SYSTEMD_PAGER", "CC", "CXX", "RUSTC",
        "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER"}) {
    const std::string program = box.ws("tools/" + variable);
    RunSpec spec;
    spec.extra_env = {variable + "=" + program};
    const RunResult r = run_script(box, spec,
                                   "mkdir -p tools && printf '#!/bin/sh\\necho PWNED\\n' > "
                                   "tools/" +
                                       variable + " && chmod +x tools/" + variable);
    BOOST_TEST(r.exit_code == 3, variable + ": " + r.describe());
    BOOST_TEST(r.err.find("ZP003") != std::string::npos, variable + ": " + r.describe());
    BOOST_TEST(!exists(program), variable + ": " + r.describe());
  }
  // Control: the same variable naming a program outside every writable root runs.
  RunSpec spec;
  spec.extra_env = {"GIT_PROXY_COMMAND=" + box.base() + "/proxy"};
  const RunResult r = run_script(box, spec, "echo mine > other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

// A29C-3: a deny root hides a name, not the file: a file of it that has another name in a
// writable root, made by the host before the run (`ln`, `cp -al`, a backup tool), was read and
// rewritten through that name. On main 4df5a8b, with `deny: ["${WORKSPACE}/secrets"]` and
// `ln secrets/key docs-key`, the command's `cat docs-key` printed the key and its `echo EVIL >>
// docs-key` changed `secrets/key`; the same for a deny root outside the workspace
// (`BASE/vault/key` linked at `WS/vault-key`). `zpolicy explain --op read docs-key` said
// allowed, `secrets/key` denied. Now every such name is denied as the deny root is: the read
// and the write fail, the file is unchanged, and the rest of the workspace stays writable.
BOOST_DATA_TEST_CASE(a_denied_files_other_name_in_the_workspace_is_denied, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  const std::string vault = box.base() + "/vault";
  box.make_dir(box.ws("secrets"));
  box.make_dir(vault);
  box.write_file(box.ws("secrets/key"), "TOPSECRET-IN\n", 0600);
  box.write_file(vault + "/key", "TOPSECRET-OUT\n", 0600);
  box.host_command({"/bin/ln", box.ws("secrets/key"), box.ws("docs-key")});
  box.host_command({"/bin/ln", vault + "/key", box.ws("vault-key")});
  RunSpec spec;
  spec.options = {"--policy", box.write_policy("deny.yaml",
                                               "zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                               "  read: [\"/\"]\n  write: [\"${WORKSPACE}\"]\n"
                                               "  deny: [\"${WORKSPACE}/secrets\", \"" +
                                                   vault + "\"]\n")};
  const RunResult r = run_script(box, spec,
                                 "cat docs-key vault-key; echo EVIL >> docs-key; echo EVIL >> "
                                 "vault-key; echo mine > other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("TOPSECRET") == std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("secrets/key")).value_or("<missing>") == "TOPSECRET-IN\n",
             r.describe());
  BOOST_TEST(read_file(vault + "/key").value_or("<missing>") == "TOPSECRET-OUT\n", r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

// A29C-3 at a protected path: `.env` (protected by the default's list) hard-linked to a
// denied key, and no other linked file in the workspace. Read-only, it was readable: the
// command printed the key on main 4df5a8b. Now it is denied as the key is.
BOOST_DATA_TEST_CASE(a_denied_files_other_name_at_a_protected_path_is_denied, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("secrets"));
  box.write_file(box.ws("secrets/key"), "TOPSECRET-ENV\n", 0600);
  box.host_command({"/bin/ln", box.ws("secrets/key"), box.ws(".env")});
  RunSpec spec;
  spec.options = {"--policy", box.write_policy("deny.yaml",
                                               "zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                               "  read: [\"/\"]\n  write: [\"${WORKSPACE}\"]\n"
                                               "  protect: [.env]\n"
                                               "  deny: [\"${WORKSPACE}/secrets\"]\n")};
  const RunResult r = run_script(box, spec, "cat .env; echo mine > other");
  BOOST_TEST(r.completed(), r.describe());
  BOOST_TEST(r.out.find("TOPSECRET") == std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("secrets/key")).value_or("<missing>") == "TOPSECRET-ENV\n",
             r.describe());
  BOOST_TEST(read_file(box.ws("other")).value_or("<missing>") == "mine\n", r.describe());
}

// A29C-3 below a directory of the workspace that another user (root) made 0711: the
// caller's sandbox reaches its files by name, and nobody's walk cannot list it (dev18-A1's
// directory, bound read-only whole). On main 4df5a8b the command printed the denied key through
// `other/alias`. Now root's run, which lists it, denies the name; nobody's run, which cannot
// tell what it holds while a denied file has other links, is refused. Either way nothing of
// the key is printed and the key is unchanged.
BOOST_DATA_TEST_CASE(a_denied_files_other_name_below_an_unlistable_directory_is_not_read,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("secrets"));
  box.write_file(box.ws("secrets/key"), "TOPSECRET-HID\n", 0600);
  const std::string other = box.ws("other");
  // Root's, as the harness runs as root.
  BOOST_TEST_REQUIRE(::mkdir(other.c_str(), 0755) == 0);
  BOOST_TEST_REQUIRE(::link(box.ws("secrets/key").c_str(), (other + "/alias").c_str()) == 0);
  BOOST_TEST_REQUIRE(::chmod(other.c_str(), 0711) == 0);
  RunSpec spec;
  spec.options = {"--policy", box.write_policy("deny.yaml",
                                               "zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                               "  read: [\"/\"]\n  write: [\"${WORKSPACE}\"]\n"
                                               "  deny: [\"${WORKSPACE}/secrets\"]\n")};
  const RunResult r = run_script(box, spec, "cat other/alias; echo EVIL >> other/alias");
  BOOST_TEST(r.out.find("TOPSECRET") == std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("secrets/key")).value_or("<missing>") == "TOPSECRET-HID\n",
             r.describe());
  if (caller == Caller::Root)
    BOOST_TEST(r.completed(), r.describe());
  else
    BOOST_TEST(r.err.find("cannot list '" + other + "'") != std::string::npos, r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
