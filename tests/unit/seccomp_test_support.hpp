#pragma once

// Shared by the seccomp unit tests: the policies they compile and the calls they probe.

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <functional>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/analyzer/seccomp/syscall_decision.hpp"
#include "compiler/frontend/oci_import.hpp"
#include "compiler/resolve/seccomp_baseline.hpp"
#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::ir {
// How Boost.Test prints an action in a failed check.
inline std::ostream& boost_test_print_type(std::ostream& o, const Action& a) { return o << a.str(); }
}  // namespace zpolicy::ir

namespace zpolicy::test {

// The findings of an invariant check (network, set-id), one report a line, for messages.
inline std::string findings_report(const std::vector<ir::Diagnostic>& fs) {
  std::string out;
  for (const auto& f : fs) out += f.report() + "\n";
  return out;
}

// Whether a dropped deny among `fs` names `text` in its probe.
inline bool names_dropped_deny(const std::vector<ir::Diagnostic>& fs, const std::string& text) {
  return std::any_of(fs.begin(), fs.end(), [&](const ir::Diagnostic& f) {
    return f.kind == "dropped-deny" && f.probe.find(text) != std::string::npos;
  });
}

inline ir::Policy policy_with(ir::Mode mode, ir::Network net,
                              ir::Action deny = ir::Action::errno_(1)) {
  ir::Policy p;
  p.mode.value = mode;
  p.network.value = net;
  p.syscalls.action.value = deny;
  return p;
}

// The baseline of a confined mode with `network: none` and `deny` as the policy's action:
// what the invariants' tests hold every emitted filter to.
inline ir::SyscallPolicy baseline_syscalls(ir::Mode mode, ir::Action deny = ir::Action::errno_(1)) {
  return compiler::effective_syscalls(policy_with(mode, ir::Network::None, deny), mode);
}

// An invariant's check of the program a syscall policy emits (set-id, shared access,
// keyring): its findings.
using InvariantCheck = std::function<std::vector<ir::Diagnostic>(const ir::SyscallPolicy&)>;

// Every emitted baseline holds the invariant, in each confined mode and deny action.
inline void expect_every_baseline_holds(const InvariantCheck& check) {
  for (auto mode : {ir::Mode::WorkspaceWrite, ir::Mode::ReadOnly})
    for (auto deny : {ir::Action::errno_(1), ir::Action::errno_(13), ir::Action::kill()}) {
      const auto fs = check(baseline_syscalls(mode, deny));
      BOOST_TEST(fs.empty(), findings_report(fs));
    }
}

// A program that allows everything, the foreign ABIs too (they answer kill by default), is
// caught on each of `calls` on every ABI that has it.
inline void expect_allow_all_caught(const InvariantCheck& check,
                                    std::initializer_list<std::string_view> calls) {
  ir::SyscallPolicy open;
  open.foreign_abi_action = ir::Action::allow();
  const auto fs = check(open);
  for (std::string_view call : calls)
    for (std::string_view abi : {"x86_64", "x32", "i386"}) {
      if (!ir::find_syscall(*ir::parse_arch(abi), call)) continue;
      const std::string probe = std::string(abi) + " " + std::string(call) + "(";
      BOOST_TEST_CONTEXT(probe) { BOOST_TEST(names_dropped_deny(fs, probe), findings_report(fs)); }
    }
}

inline ir::SyscallPolicy default_syscalls() {
  return compiler::effective_syscalls(ir::Policy{}, ir::Mode::WorkspaceWrite);
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline const std::string kDockerProfile = std::string(ZPOLICY_SHARED_DATA) + "/moby-default-seccomp.json";

inline ir::SyscallSpec docker_spec() {
  ir::Diagnostics diags;
  auto spec = compiler::import_oci_seccomp(read_text(kDockerProfile), kDockerProfile, diags);
  if (!spec) throw std::runtime_error("importing Docker's profile failed: " + diags.str());
  return *spec;
}

// Docker's profile alone, as libseccomp would enforce it.
inline ir::SyscallPolicy docker_only() {
  const auto spec = docker_spec();
  ir::SyscallPolicy p;
  p.default_action = spec.action.value;
  p.rules = spec.rules;
  return p;
}

// Docker's profile as the policy's `syscalls:` section of a workspace-write run.
inline ir::SyscallPolicy docker_in_sandbox() {
  ir::Policy p;
  p.syscalls = docker_spec();
  return compiler::effective_syscalls(p, ir::Mode::WorkspaceWrite);
}

// An allow-list with overlapping rules of different actions and 64-bit range
// conditions, the shapes libseccomp gets wrong or cannot express.
inline ir::SyscallPolicy tricky_syscalls() {
  using ir::CmpOp;
  ir::SyscallPolicy p;
  p.default_action = ir::Action::errno_(1);
  auto rule = [&](const char* name, ir::Action a, std::vector<ir::ArgCondition> c) {
    p.rules.push_back({name, a, std::move(c), {}});
  };
  const uint64_t all = ~uint64_t{0};
  for (const char* n : {"read", "close", "exit_group", "brk", "fstat", "openat"})
    rule(n, ir::Action::allow(), {});
  rule("mmap", ir::Action::allow(), {{1, CmpOp::Gt, 0x100000000, all}, {1, CmpOp::Lt, 0x300000005, all}});
  rule("mmap", ir::Action::errno_(12), {{1, CmpOp::Ge, 0x200000000, all}});
  rule("mprotect", ir::Action::allow(), {{2, CmpOp::Le, 0x1ffffffff, all}});
  rule("write", ir::Action::allow(), {{0, CmpOp::Eq, 1, all}});
  rule("write", ir::Action::allow(), {{0, CmpOp::Eq, 2, all}});
  rule("write", ir::Action::errno_(5), {{2, CmpOp::Gt, 100, all}});
  rule("write", ir::Action::kill(), {{0, CmpOp::Eq, 99, all}, {2, CmpOp::Eq, 7, all}});
  rule("kill", ir::Action::allow(), {{1, CmpOp::Lt, 9, all}});
  rule("personality", ir::Action::allow(), {{0, CmpOp::Ne, 0xffffffff, all}});
  rule("clone", ir::Action::allow(), {{0, CmpOp::MaskedEq, 0x0000000100000000, 0x0000000100000100}});
  rule("socket", ir::Action::allow(), {{0, CmpOp::Eq, 1, all}, {1, CmpOp::MaskedEq, 1, 0xf}});
  rule("ioctl", ir::Action::allow(), {{1, CmpOp::MaskedEq, 0x5400, 0xff00}});
  rule("ioctl", ir::Action::errno_(25), {{1, CmpOp::Eq, 0x5412, all}});
  rule("not_a_syscall", ir::Action::allow(), {});
  return p;
}

}  // namespace zpolicy::test
