#include "compiler/default_policy.hpp"

#include <stdexcept>

#include "compiler/frontend.hpp"

namespace zpolicy::compiler {

std::string default_policy_text(ir::Mode mode) {
  std::string t;
  t += "# zpolicy built-in default policy (language version 1).\n";
  t += "zpolicy: 1\n";
  t += std::string("mode: ") + ir::to_string(mode) + "\n";
  t += "filesystem:\n";
  t += "  read: [\"/\"]\n";
  if (mode != ir::Mode::ReadOnly) {
    t += "  write: [\"${WORKSPACE}\"]\n";
    t += "  # Stay read-only inside every writable root, whether they exist or not.\n";
    t += "  protect: [";
    const auto& subs = default_protected_subpaths();
    for (size_t i = 0; i < subs.size(); ++i) t += (i ? ", " : "") + subs[i];
    t += "]\n";
  }
  t += "  deny: []\n";
  t += "network: none\n";
  t += "syscalls:\n";
  t += "  # Added to the mode's baseline deny set (see docs/seccomp.md).\n";
  t += "  deny: [ptrace, process_vm_readv, process_vm_writev]\n";
  t += "  action: errno\n";
  t += "process:\n";
  t += "  env:\n";
  t += "    keep: [";
  const auto& keep = ir::default_env_keep();
  for (size_t i = 0; i < keep.size(); ++i) t += (i ? ", " : "") + keep[i];
  t += "]\n";
  t += "    set: {}\n";
  t += "unavailable: deny\n";
  return t;
}

ir::Policy default_policy(ir::Mode mode) {
  ir::Diagnostics diags;
  auto p = parse_policy(default_policy_text(mode), kDefaultPolicyFile, diags);
  if (!p) throw std::logic_error("built-in default policy does not parse:\n" + diags.str());
  return *p;
}

}  // namespace zpolicy::compiler
