#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/mode.hpp"
#include "ir/path.hpp"
#include "ir/policy.hpp"
#include "ir/source_location.hpp"
#include "ir/syscall_policy.hpp"

namespace zpolicy::ir {

// What the host holds at a path when the policy is bound to it. Portable compilation
// knows nothing of the host: every path is Unknown and spelled symbolically.
enum class HostKind { Unknown, Directory, File, Missing };
const char* to_string(HostKind k);

// Which object a host path named when it was resolved (st_dev, st_ino). The runner hands
// bwrap a descriptor of each bind source and refuses when the object it opened is not
// this one: a path swapped (for a symlink, or another directory) after resolution binds
// nothing (docs/run.md "Binding by descriptor").
struct HostIdentity {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  friend bool operator==(const HostIdentity&, const HostIdentity&) = default;
};

// One path of the resolved policy. `path` is absolute and canonical for a bound run
// ("/home/u/proj/.git") or symbolic for a portable one ("${WORKSPACE}/.git").
struct ResolvedPath {
  std::string path;
  HostKind kind = HostKind::Unknown;
  SourceLoc loc;  // the policy line that asked for it
  // For a bound path that exists: the object resolution looked at. Empty when portable,
  // missing, or a placeholder the runner has not created yet.
  std::optional<HostIdentity> identity = {};
  // For a bound path that exists and is not a directory: its link count then. A file moved
  // away with a hard link left at its name is the same object (red team A13C-2), but it has
  // one name more; a directory's count follows its subdirectories, so it is not kept.
  std::uint64_t links = 0;
  friend bool operator==(const ResolvedPath&, const ResolvedPath&) = default;
};

// Whether `path` is one of `roots` or lies below one (path_within).
inline bool within_any(const std::vector<ResolvedPath>& roots, std::string_view path) {
  return std::any_of(roots.begin(), roots.end(),
                     [&](const ResolvedPath& root) { return path_within(root.path, path); });
}

// A readable root the policy names through a symlink (/lib64 -> usr/lib64 on merged-/usr
// systems). `read` holds the canonical target; the sandbox keeps the name as a symlink to
// it, since programs use the name (the ELF interpreter /lib64/ld-linux-x86-64.so.2).
struct ReadLink {
  std::string link;    // the name as the policy binds it, absolute
  std::string target;  // the canonical path, a readable root
  SourceLoc loc;
  friend bool operator==(const ReadLink&, const ReadLink&) = default;
};

// The policy bound to one host (or kept symbolic): the input of every emitter. Emitters
// read only this; they never look at the environment or the filesystem.
struct Resolved {
  Mode mode = Mode::WorkspaceWrite;
  bool portable = true;
  std::vector<ResolvedPath> read;    // readable roots
  // Names of readable roots that are symlinks, where no other readable root shows them.
  std::vector<ReadLink> read_links;
  std::vector<ResolvedPath> write;   // writable roots, shallowest first
  // Directories between a writable root and a protected path: bound onto themselves so
  // that they are mount points, which the kernel refuses to rename or remove (EBUSY).
  std::vector<ResolvedPath> pin;
  std::vector<ResolvedPath> protect;  // absolute, one per (writable root, subpath)
  std::vector<ResolvedPath> deny;
  Network network = Network::None;
  // The line that decides the network: `network:`, or `mode:` when read-only forces none;
  // "<builtin>" for the default.
  SourceLoc network_loc;
  std::vector<Located<Destination>> allow;  // network Allow only; empty otherwise
  bool private_tmp = true;  // false when a writable root is the host's /tmp
  std::string cwd;          // the sandbox's working directory
  SyscallPolicy syscalls;
  EnvPolicy env;
  std::optional<std::chrono::milliseconds> timeout;
  Unavailable unavailable = Unavailable::Deny;
};

}  // namespace zpolicy::ir
