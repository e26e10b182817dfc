#pragma once

#include <string>

#include "sandbox_fixture.hpp"

// git on the host, as the caller runs it between sandboxed runs: the attack suites make
// repositories with it, plant hooks the sandbox's command would write, and then run the
// host's git to see whether the hook ran.
namespace zpolicy::tests::kernel {

inline const std::string kGit = "/usr/bin/git";

// A shell step that writes the executable hook `path`, which records `marker` when run.
inline std::string hook(const std::string& path, const std::string& marker) {
  return "printf '#!/bin/sh\\necho PWNED > " + marker + "\\n' > " + path + " && chmod +x " + path;
}

// An empty commit in the repository at `dir`, on the host as the caller.
inline void commit_empty(const Sandbox& box, const std::string& dir, const std::string& message) {
  box.host_command({kGit, "-C", dir, "-c", "user.name=t", "-c", "user.email=t@t.test", "commit",
                    "-q", "--allow-empty", "-m", message});
}

// `git config KEY VALUE` in the repository at `repo`, on the host as the caller.
inline void git_config_set(const Sandbox& box, const std::string& repo, const std::string& key,
                           const std::string& value) {
  box.host_command({kGit, "-C", repo, "config", key, value});
}

// A monorepo: the sandbox's workspace() a repository with a commit, and its package
// directory `app` (made by the caller, untracked).
inline void monorepo(const Sandbox& box) {
  box.host_command({kGit, "init", "-q", box.workspace()});
  commit_empty(box, box.workspace(), "i");
  box.make_dir(box.ws("app"));
}

// The workspace made a repository with one commit, its git directory in the workspace
// (`.git`) or outside it (`git init --separate-git-dir BASE/gd`); returns the git directory.
inline std::string workspace_repository(const Sandbox& box, bool separate) {
  const std::string gitdir = separate ? box.base() + "/gd" : box.ws(".git");
  if (separate) {
    box.make_dir(gitdir);
    box.host_command({kGit, "init", "-q", "--separate-git-dir", gitdir, box.workspace()});
  } else {
    box.host_command({kGit, "init", "-q", box.workspace()});
  }
  commit_empty(box, box.workspace(), "i");
  return gitdir;
}

// The workspace made a repository (no commit of its own) whose populated submodule `lib`
// comes from `BASE/libsrc`, committed; git keeps lib's git directory at `.git/modules/lib`.
// Returns the source repository.
inline std::string populated_submodule(const Sandbox& box) {
  const std::string libsrc = box.base() + "/libsrc";
  box.make_dir(libsrc);
  box.host_command({kGit, "init", "-q", libsrc});
  commit_empty(box, libsrc, "l");
  box.host_command({kGit, "init", "-q", box.workspace()});
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && git -c protocol.file.allow=always submodule add -q \"$2\" lib && "
                    "git -c user.name=t -c user.email=t@t.test commit -q -m lib",
                    "sh", box.workspace(), libsrc});
  return libsrc;
}

// The host's `git commit` in `repo`, as the caller, with `path_head` before the host's PATH
// (empty: none), whatever it answers: a pre-commit hook the command planted would run.
inline void host_commit(const Sandbox& box, const std::string& repo,
                        const std::string& path_head = "") {
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && PATH=\"$2$PATH\" git -c user.name=t -c user.email=t@t.test "
                    "commit -q --allow-empty -m x >/dev/null 2>&1; true",
                    "sh", repo, path_head.empty() ? "" : path_head + ":"});
}

// The host's `git commit` in `repo` with `GIT_WORK_TREE=WORK_TREE` exported (no `GIT_DIR`),
// as the caller, whatever it answers: git takes the work tree for the top, and runs a
// relative `core.hooksPath` from there.
inline void host_commit_in_work_tree(const Sandbox& box, const std::string& repo,
                                     const std::string& work_tree) {
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && GIT_WORK_TREE=\"$2\" git -c user.name=t -c user.email=t@t.test "
                    "commit -q --allow-empty -m x >/dev/null 2>&1; true",
                    "sh", repo, work_tree});
}

// A submodule `sub` of the workspace's repository that its index records, deinitialized (not
// populated; git keeps its git directory `GITDIR/modules/sub`); returns its source
// repository `BASE/subsrc`.
inline std::string deinitialized_submodule(const Sandbox& box) {
  const std::string subsrc = box.base() + "/subsrc";
  box.make_dir(subsrc);
  box.host_command({kGit, "init", "-q", subsrc});
  commit_empty(box, subsrc, "s");
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && git -c protocol.file.allow=always submodule add -q \"$2\" sub && "
                    "git -c user.name=t -c user.email=t@t.test commit -q -m sub && "
                    "git submodule deinit -q -f sub",
                    "sh", box.workspace(), subsrc});
  return subsrc;
}

// The host's `git submodule update --init` in the workspace, as the caller, whatever it says.
inline void host_submodule_update(const Sandbox& box) {
  box.host_command({"/bin/sh", "-c",
                    "cd \"$1\" && git submodule update --init >/dev/null 2>&1; true", "sh",
                    box.workspace()});
}

}  // namespace zpolicy::tests::kernel
