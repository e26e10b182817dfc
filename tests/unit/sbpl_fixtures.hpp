#pragma once

#include <string>
#include <vector>

#include "compiler/analyzer/sbpl/sbpl_verify.hpp"
#include "ir/resolved.hpp"

// Resolved policies built in code for the macOS tests: the built-in default (portable and
// bound), read-only, deny roots with loopback, partial reads, nested writable roots, a
// hostile workspace name, and the opt-out.
namespace zpolicy::test::sbpl {

inline const std::vector<std::string>& default_carveouts() {
  static const std::vector<std::string> names = {".git",         ".env",  ".env.local",
                                                 "node_modules", ".next", "data/agent-sessions"};
  return names;
}

// The emitter's parameters as the verifier takes them: views of `params`, which must
// outlive the list.
inline compiler::SbplParamList views(
    const std::vector<std::pair<std::string, std::string>>& params) {
  return {params.begin(), params.end()};
}

inline ir::ResolvedPath rp(std::string path, int line = 0) {
  return {std::move(path), ir::HostKind::Unknown, {"policy.yaml", line, line ? 3 : 0}};
}

// workspace-write, read "/", the given writable roots with the default carveouts below
// each, no deny roots, no network.
inline ir::Resolved workspace_write(const std::vector<std::string>& roots, bool portable = true) {
  ir::Resolved r;
  r.mode = ir::Mode::WorkspaceWrite;
  r.portable = portable;
  r.read.push_back(rp("/", 3));
  int line = 4;
  for (const auto& root : roots) r.write.push_back(rp(root, line++));
  for (const auto& root : roots)
    for (const auto& name : default_carveouts()) r.protect.push_back(rp(root + "/" + name, 10));
  r.network = ir::Network::None;
  r.cwd = roots.empty() ? "/" : roots.front();
  return r;
}

inline ir::Resolved default_portable() { return workspace_write({"${WORKSPACE}"}); }

inline ir::Resolved default_bound(const std::string& workspace) {
  return workspace_write({workspace}, false);
}

inline ir::Resolved read_only() {
  ir::Resolved r;
  r.mode = ir::Mode::ReadOnly;
  r.read.push_back(rp("/", 3));
  r.deny.push_back(rp("${HOME}/.ssh", 12));
  r.cwd = "${WORKSPACE}";
  return r;
}

inline ir::Resolved deny_roots_loopback() {
  ir::Resolved r = workspace_write({"${WORKSPACE}", "${TMPDIR}"});
  r.deny.push_back(rp("${HOME}/.ssh", 12));
  r.deny.push_back(rp("${HOME}/.aws", 13));
  r.deny.push_back(rp("${WORKSPACE}/secrets", 14));
  r.network = ir::Network::Loopback;
  return r;
}

inline ir::Resolved partial_read_full_network() {
  ir::Resolved r = workspace_write({"${WORKSPACE}"});
  r.read.clear();
  r.read.push_back(rp("${WORKSPACE}", 3));
  r.read.push_back(rp("/opt/tools", 3));
  r.deny.push_back(rp("/opt/tools/keys", 14));
  r.network = ir::Network::Full;
  return r;
}

// A writable root inside another: the outer root must not let the inner root's protected
// paths, or the directories above them, be written.
inline ir::Resolved nested_roots() {
  ir::Resolved r;
  r.mode = ir::Mode::WorkspaceWrite;
  r.portable = false;
  r.read.push_back(rp("/", 3));
  r.write.push_back(rp("/Users/u", 4));
  r.write.push_back(rp("/Users/u/src/proj", 5));
  r.protect.push_back(rp("/Users/u/src/proj/.git", 10));
  r.protect.push_back(rp("/Users/u/src/proj/data/agent-sessions", 10));
  r.deny.push_back(rp("/Users/u/.ssh", 12));
  return r;
}

inline ir::Resolved danger() {
  ir::Resolved r = default_portable();
  r.mode = ir::Mode::DangerFullAccess;
  return r;
}

}  // namespace zpolicy::test::sbpl
