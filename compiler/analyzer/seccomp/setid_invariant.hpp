#pragma once

#include <span>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"
#include "ir/diagnostic.hpp"

namespace zpolicy::compiler {

// Invariant 6 (setuid is inert), checked on the program itself rather than against the
// IR's rules, so that a baseline that lost a rule is caught as surely as an edited
// artifact. A run started by root owns what it creates as host uid 0, so no call may
// leave a file with S_ISUID or S_ISGID: the program must refuse chmod, fchmod,
// fchmodat, fchmodat2, open, openat, creat, mknod, mknodat, mkdir and mkdirat whenever
// the mode asks for either bit (with or without O_CREAT/O_TMPFILE, with any file type
// bits, with garbage in the high half of the 64-bit argument), and openat2, whose mode
// it cannot read, always. The same on the x32 and i386 ABIs. Returns one finding per
// call and ABI the program lets through. `program` is seccomp.bpf as parse_bpf reads it.
std::vector<ir::Diagnostic> check_setid_invariant(std::span<const BpfInsn> program);

}  // namespace zpolicy::compiler
