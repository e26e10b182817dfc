#pragma once

#include <string>
#include <vector>

#include "ir/resolved.hpp"

namespace zpolicy::emitters::bwrap {

// The descriptor on which the runner hands bwrap the seccomp program; fixed so that the
// compiled argv is exactly what runs.
inline constexpr int kSeccompFd = 3;

// How a bind names its host source.
//  * Path: `--bind SRC DEST`, what `compile` writes: a file a reviewer reads and a user can
//    run with bwrap by hand, where no descriptor exists.
//  * Descriptor: `--bind-fd FD DEST` (and `--ro-bind-fd`), what `run` executes. bwrap
//    resolves a path source again when it mounts, so a source swapped for a symlink in
//    between would bind whatever the symlink names; a descriptor is the object the runner
//    opened and checked. Which path each descriptor holds is the `bwrap.fds` artifact.
enum class BindForm { Path, Descriptor };

// The first descriptor of a Descriptor bind: 3 is the seccomp program, 4 the runner's
// status stream (--json-status-fd).
inline constexpr int kFirstBindFd = 5;

// A descriptor the runner opens before bwrap starts: `path` opened without following
// symlinks, installed as `fd` in bwrap.
struct BindSource {
  int fd;
  std::string path;
};

struct BwrapArgs {
  std::vector<std::string> args;     // up to and excluding "--"
  std::vector<BindSource> sources;   // Descriptor form only; by fd, each used once
};

// The bwrap arguments for a confined mode. Pure: depends on the resolved IR only.
// Precondition: r.mode is read-only or workspace-write.
BwrapArgs emit(const ir::Resolved& r, BindForm form);

// emit(r, BindForm::Path).args.
std::vector<std::string> emit_args(const ir::Resolved& r);

// The `bwrap.args` artifact: one argument per line.
std::string args_text(const std::vector<std::string>& args);

// The `bwrap.fds` artifact: one "FD PATH" line per descriptor bind.
std::string sources_text(const std::vector<BindSource>& sources);

}  // namespace zpolicy::emitters::bwrap
