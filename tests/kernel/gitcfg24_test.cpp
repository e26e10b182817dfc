#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "host_git.hpp"
#include "sandbox_fixture.hpp"

// Red team A23C-3 and A23C-4 (docs/redteam-2026-12.md), repositories above a writable root
// (docs/protected-paths.md "Repositories above a writable root"):
// * A23C-3: git stays in the directory it was started in for a repository it takes for
//   bare (`core.bare = true` in a `.git`) or whose `core.worktree` does not hold that
//   directory, and runs hooks and `!` aliases there; a relative `core.hooksPath` or alias
//   word then names a path in the package the sandbox writes. Such a value now refuses the
//   run (exit 2).
// * A23C-4: a repository whose package directory is a host symlink to the workspace
//   (`mono/app -> WS`), the run started in `mono/app`: now found from the caller's
//   spelling ($PWD, the policy's), and what its config names in the workspace protected.
// Observed from the host, as root and as uid 65534: the hook the command would write is
// not there, and the host's own git afterwards writes no marker.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_gitcfg24)

namespace {

// `zpolicy run` with `options` in `cwd` (and $PWD spelling it), the command `sh -c SCRIPT`
// followed by kDoneMarker when it succeeded.
RunResult run_at(const Sandbox& box, std::vector<std::string> options, const std::string& cwd,
                 const std::string& script) {
  RunSpec spec;
  spec.options = std::move(options);
  spec.cwd = cwd;
  spec.extra_env = {"PWD=" + cwd};
  spec.command = {"/bin/sh", "-c", script + " && echo '" + std::string(kDoneMarker) + "'"};
  return box.run(spec);
}

// The host's next git commands in `dir`, as the caller, whatever they answer: a ref update
// (the reference-transaction hook, which git runs outside a worktree too), the alias
// `lint`, a commit (pre-commit).
void host_git_in(const Sandbox& box, const std::string& dir) {
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && for c in 'update-ref refs/heads/zp HEAD' lint "
                    "'commit -q --allow-empty -m x'; do git -c user.name=t "
                    "-c user.email=t@t.test $c >/dev/null 2>&1; done; true",
                    "sh", dir});
}

enum class StartDir { AboveBare, OwnBare, AboveWorktreeElsewhere, AboveBareAlias };
std::ostream& operator<<(std::ostream& os, StartDir s) {
  return os << (s == StartDir::AboveBare                ? "core.bare above"
                : s == StartDir::OwnBare                ? "core.bare in the workspace's own"
                : s == StartDir::AboveWorktreeElsewhere ? "core.worktree elsewhere above"
                                                        : "core.bare above, ! alias");
}

}  // namespace

// A23C-3: the monorepo's `.git/config` says `core.bare = true` (or `core.worktree = ../wt`)
// and `core.hooksPath = hooks` (or `alias.lint = !tools/lint`); the workspace is the
// package `app` (or the monorepo itself, run in `app`). On main da339b0 the run went on
// (exit 0), the command wrote `app/hooks/reference-transaction` (`app/tools/lint`), and
// the host's `git update-ref` (`git lint`) in `app` ran it. Now refused, exit 2, at the
// config line, and nothing is written.
BOOST_DATA_TEST_CASE(a_relative_value_git_resolves_where_it_was_started_is_refused,
                     bdata::make(kCallers) *
                         bdata::make({StartDir::AboveBare, StartDir::OwnBare,
                                      StartDir::AboveWorktreeElsewhere, StartDir::AboveBareAlias}),
                     caller, shape) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  monorepo(box);
  if (shape == StartDir::AboveWorktreeElsewhere) {
    box.make_dir(box.ws("wt"));
    git_config_set(box, box.workspace(), "core.worktree", "../wt");
  } else {
    git_config_set(box, box.workspace(), "core.bare", "true");
  }
  const bool alias = shape == StartDir::AboveBareAlias;
  if (alias)
    git_config_set(box, box.workspace(), "alias.lint", "!tools/lint");
  else
    git_config_set(box, box.workspace(), "core.hooksPath", "hooks");
  const std::string written = alias ? "tools/lint" : "hooks/reference-transaction";
  const std::string workspace = shape == StartDir::OwnBare ? box.workspace() : box.ws("app");
  const RunResult r = run_at(
      box, {"--workspace", workspace}, box.ws("app"),
      std::string("mkdir -p ") + (alias ? "tools" : "hooks") + " && " + hook(written, pwned));
  BOOST_TEST(r.exit_code == 2, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(r.err.find("relative to the directory git runs it in") != std::string::npos,
             r.describe());
  BOOST_TEST(r.err.find(alias ? "alias.lint" : "core.hookspath") != std::string::npos,
             r.describe());
  BOOST_TEST(!exists(box.ws("app/" + written)), r.describe());
  host_git_in(box, box.ws("app"));
  BOOST_TEST(!exists(pwned), r.describe());
}

namespace {

enum class Spelled { Pwd, Policy };
std::ostream& operator<<(std::ostream& os, Spelled s) {
  return os << (s == Spelled::Pwd ? "$PWD" : "the policy's writable root");
}

// The host's monorepo BASE/mono (a commit) whose package `app` is a symlink to the
// workspace; returns BASE/mono.
std::string linked_package(const Sandbox& box) {
  const std::string mono = box.base() + "/mono";
  box.make_dir(mono);
  box.host_command({kGit, "init", "-q", mono});
  commit_empty(box, mono, "i");
  box.host_command({"/bin/ln", "-s", box.workspace(), mono + "/app"});
  return mono;
}

// A run in BASE/mono/app: the default policy from $PWD, or a policy whose writable root
// is spelled BASE/mono/app.
RunResult run_in_linked_package(const Sandbox& box, Spelled spelled, const std::string& mono,
                                const std::string& script) {
  std::vector<std::string> options;
  if (spelled == Spelled::Policy)
    options = {"--policy", box.write_policy("p.yaml",
                                            "zpolicy: 1\nmode: workspace-write\nfilesystem:\n"
                                            "  read: [\"/\"]\n  write: [\"" +
                                                mono +
                                                "/app\"]\n  protect: [.git]\n"
                                                "network: none\n")};
  return run_at(box, options, mono + "/app", script);
}

}  // namespace

// A23C-4: `mono/app -> WS`, `core.hooksPath = app/hooks` in `mono`, the run started in
// `mono/app`. On main da339b0 the walk up began at the canonical WS and never met `mono`:
// the command wrote `hooks/pre-commit` (exit 0), and the host's `git commit` in `mono` ran
// it. Now the walk also starts at the caller's spelling, and `hooks` is read-only.
BOOST_DATA_TEST_CASE(a_repository_above_a_host_link_to_the_workspace_is_read,
                     bdata::make(kCallers) * bdata::make({Spelled::Pwd, Spelled::Policy}), caller,
                     spelled) {
  Sandbox box(caller);
  const std::string pwned = box.ws("pwned");
  const std::string mono = linked_package(box);
  box.make_dir(box.ws("hooks"));
  git_config_set(box, mono, "core.hooksPath", "app/hooks");
  const RunResult r = run_in_linked_package(box, spelled, mono, hook("hooks/pre-commit", pwned));
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) == std::string::npos, r.describe());
  BOOST_TEST(!exists(box.ws("hooks/pre-commit")), r.describe());
  host_git_in(box, mono);
  BOOST_TEST(!exists(pwned), r.describe());
}

namespace {

enum class Ordinary { Monorepo, BareAbsoluteHooks, Submodule, LinkedPackage };
std::ostream& operator<<(std::ostream& os, Ordinary o) {
  return os << (o == Ordinary::Monorepo            ? "monorepo, relative values"
                : o == Ordinary::BareAbsoluteHooks ? "core.bare, absolute hooks path"
                : o == Ordinary::Submodule         ? "submodule's core.worktree"
                                                   : "package linked to the workspace");
}

}  // namespace

// Held (no false refusal): an ordinary monorepo (core.bare = false, no core.worktree) with
// a relative hooks path and `!` alias word at its top; a repository above that git takes
// for bare but whose hooks path is absolute (outside the workspace); a populated submodule,
// whose git directory's `core.worktree` holds its top, with a relative hooks path; a plain
// monorepo whose package is a host link to the workspace. Each run completes and writes.
BOOST_DATA_TEST_CASE(ordinary_configurations_still_run,
                     bdata::make(kCallers) *
                         bdata::make({Ordinary::Monorepo, Ordinary::BareAbsoluteHooks,
                                      Ordinary::Submodule, Ordinary::LinkedPackage}),
                     caller, kind) {
  Sandbox box(caller);
  std::vector<std::string> options;
  std::string cwd = box.ws("app");
  if (kind == Ordinary::Monorepo || kind == Ordinary::BareAbsoluteHooks) {
    monorepo(box);
    options = {"--workspace", box.ws("app")};
  }
  if (kind == Ordinary::Monorepo) {
    box.make_dir(box.ws("tools/hooks"));
    git_config_set(box, box.workspace(), "core.hooksPath", "tools/hooks");
    git_config_set(box, box.workspace(), "alias.lint", "!tools/lint --fix");
  } else if (kind == Ordinary::BareAbsoluteHooks) {
    box.make_dir(box.base() + "/hooks");
    git_config_set(box, box.workspace(), "core.bare", "true");
    git_config_set(box, box.workspace(), "core.hooksPath", box.base() + "/hooks");
    git_config_set(box, box.workspace(), "alias.last", "!git log -1 HEAD");
  } else if (kind == Ordinary::Submodule) {
    const std::string subsrc = box.base() + "/subsrc";
    box.make_dir(subsrc);
    box.host_command({kGit, "init", "-q", subsrc});
    commit_empty(box, subsrc, "s");
    workspace_repository(box, false);
    box.host_command({"/bin/sh", "-c",
                      "cd \"$1\" && git -c protocol.file.allow=always submodule add -q \"$2\" "
                      "sub && git -C sub config core.hooksPath hooks",
                      "sh", box.workspace(), subsrc});
    box.make_dir(box.ws("app"));
    options = {"--workspace", box.workspace()};
  } else {
    cwd = linked_package(box) + "/app";
    box.make_dir(box.ws("app"));
  }
  const RunResult r = run_at(box, options, cwd, "echo mine > out");
  BOOST_TEST(r.exit_code == 0, r.describe());
  BOOST_TEST(r.out.find(kDoneMarker) != std::string::npos, r.describe());
  const std::string out = kind == Ordinary::LinkedPackage ? box.ws("out") : box.ws("app/out");
  BOOST_TEST(read_file(out).value_or("<missing>") == "mine\n", r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
