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

}  // namespace zpolicy::tests::kernel
