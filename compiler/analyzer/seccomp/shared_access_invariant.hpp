#pragma once

#include <span>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"
#include "ir/diagnostic.hpp"

namespace zpolicy::compiler {

// Invariant 2 against other local users, checked on the program itself (red team
// A27B-1): the sandbox owns the caller's directories, among them the workspace and those
// holding protected paths, and a mode or ACL letting every local user write one outlives
// the run (another user then swaps `.git` or `node_modules` there). So the program must
// refuse chmod, fchmod, fchmodat and fchmodat2 whenever the mode has S_IWOTH (with any
// other bits, with garbage in the high half of the 64-bit argument), and setxattr,
// lsetxattr, fsetxattr, setxattrat, removexattr, lremovexattr, fremovexattr and
// removexattrat always (an ACL is an attribute, and the filter cannot read its name).
// The same on the x32 and i386 ABIs. Returns one finding per call and ABI the program
// lets through. `program` is seccomp.bpf as parse_bpf reads it.
std::vector<ir::Diagnostic> check_shared_access_invariant(std::span<const BpfInsn> program);

}  // namespace zpolicy::compiler
