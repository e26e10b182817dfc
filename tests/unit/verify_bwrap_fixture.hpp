#pragma once

#include <string>
#include <vector>

#include "ir/resolved.hpp"

// The policy and the bwrap argv the design expects for it (DESIGN.md, issue 6), written
// by hand so that the verifier is tested without the emitter.
namespace zpolicy::test {

inline ir::ResolvedPath at(std::string path, int line, ir::HostKind kind = ir::HostKind::Unknown) {
  return ir::ResolvedPath{std::move(path), kind, ir::SourceLoc{"policy.yaml", line, 5}};
}

// workspace-write, portable: read /, write ${WORKSPACE}, protect .env .git
// data/agent-sessions, deny ~/.ssh (a directory) and ~/.aws/credentials (a file).
inline ir::Resolved workspace_policy() {
  ir::Resolved r;
  r.mode = ir::Mode::WorkspaceWrite;
  r.portable = true;
  r.read = {at("/", 4)};
  r.write = {at("${WORKSPACE}", 5)};
  r.pin = {at("${WORKSPACE}/data", 6)};
  r.protect = {at("${WORKSPACE}/.env", 6), at("${WORKSPACE}/.git", 6),
               at("${WORKSPACE}/data/agent-sessions", 6)};
  r.deny = {at("${HOME}/.ssh", 7, ir::HostKind::Directory),
            at("${HOME}/.aws/credentials", 7, ir::HostKind::File)};
  r.network = ir::Network::None;
  r.private_tmp = true;
  r.cwd = "${WORKSPACE}";
  return r;
}

// One bwrap option with its arguments.
using Option = std::vector<std::string>;

inline std::vector<Option> workspace_argv() {
  const std::string w = "${WORKSPACE}";
  return {
      {"--new-session"},
      {"--die-with-parent"},
      {"--unshare-user"},
      {"--unshare-ipc"},
      {"--unshare-pid"},
      {"--unshare-uts"},
      {"--unshare-cgroup-try"},
      {"--unshare-net"},
      {"--disable-userns"},
      {"--cap-drop", "ALL"},
      {"--ro-bind", "/", "/"},
      {"--dev", "/dev"},
      {"--proc", "/proc"},
      {"--tmpfs", "/tmp"},
      {"--bind", w, w},
      {"--bind", w + "/data", w + "/data"},
      {"--ro-bind", w + "/.env", w + "/.env"},
      {"--ro-bind", w + "/.git", w + "/.git"},
      {"--ro-bind", w + "/data/agent-sessions", w + "/data/agent-sessions"},
      {"--perms", "000"},
      {"--tmpfs", "${HOME}/.ssh"},
      {"--remount-ro", "${HOME}/.ssh"},
      {"--ro-bind", "/dev/null", "${HOME}/.aws/credentials"},
      // Last rather than after --proc, where the emitter puts it: the tests that place
      // options by index were written before it.
      {"--remount-ro", "/proc"},
      {"--chdir", w},
      {"--seccomp", "3"},
  };
}

// read-only, bound to a host: three readable roots (no "/"), a deny directory inside
// one of them and a deny file, loopback network.
inline ir::Resolved readonly_policy() {
  ir::Resolved r;
  r.mode = ir::Mode::ReadOnly;
  r.portable = false;
  r.read = {at("/usr", 3, ir::HostKind::Directory), at("/etc", 3, ir::HostKind::Directory),
            at("/home/u/proj", 4, ir::HostKind::Directory)};
  r.deny = {at("/home/u/proj/secrets", 8, ir::HostKind::Directory),
            at("/etc/shadow", 9, ir::HostKind::File)};
  r.network = ir::Network::Loopback;
  r.private_tmp = true;
  r.cwd = "/home/u/proj";
  return r;
}

inline std::vector<Option> readonly_argv() {
  return {
      {"--new-session"},
      {"--die-with-parent"},
      {"--unshare-user"},
      {"--unshare-ipc"},
      {"--unshare-pid"},
      {"--unshare-uts"},
      {"--unshare-cgroup-try"},
      {"--unshare-net"},
      {"--disable-userns"},
      {"--cap-drop", "ALL"},
      {"--ro-bind", "/usr", "/usr"},
      {"--ro-bind", "/etc", "/etc"},
      {"--ro-bind", "/home/u/proj", "/home/u/proj"},
      {"--dev", "/dev"},
      {"--proc", "/proc"},
      {"--tmpfs", "/tmp"},
      {"--perms", "000"},
      {"--tmpfs", "/home/u/proj/secrets"},
      {"--remount-ro", "/home/u/proj/secrets"},
      {"--ro-bind", "/dev/null", "/etc/shadow"},
      {"--remount-ro", "/proc"},
      {"--chdir", "/home/u/proj"},
      {"--seccomp", "3"},
  };
}

inline std::string render(const std::vector<Option>& options) {
  std::string out;
  for (const auto& o : options)
    for (const auto& a : o) out += a + "\n";
  return out;
}

}  // namespace zpolicy::test
