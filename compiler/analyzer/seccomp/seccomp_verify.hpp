#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/analyzer/seccomp/syscall_decision.hpp"
#include "ir/syscall_policy.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::compiler {

// One probe on which a seccomp artifact disagrees with the IR.
struct SeccompFinding {
  uint32_t audit_arch = 0;
  SyscallCall call;
  ir::Action intended;
  std::optional<ir::Action> actual;  // nullopt: a return value the IR has no word for
  std::vector<uint32_t> trace;       // the instructions the interpreter executed
  // The artifact answers less restrictively than the IR: a deny would be dropped.
  bool dropped_deny() const;
  std::string str() const;
};

struct SeccompVerification {
  std::string program_error;  // non-empty when the bytes are no valid seccomp program
  size_t probes = 0;
  size_t mismatches = 0;
  std::vector<SeccompFinding> findings;  // the first mismatch of each call, up to 100
  bool ok() const { return program_error.empty() && mismatches == 0; }
};

// Checks a seccomp program against the IR with the independent interpreter, never
// trusting the emitter: every audited ABI (x86_64, x32 through the x32 bit, i386, and a
// foreign arch), every number 0..1023, the boundaries of the number space, and for each
// x86_64 syscall with argument rules the values around each condition, their high-word
// variants and pairs of them. The program runs once per number with zero arguments;
// only where that path loads an argument does it run again on the other vectors (plus
// all-ones and every compared value in every argument), since a path that loads none
// answers the same for all of them.
SeccompVerification verify_seccomp(const ir::SyscallPolicy& policy, std::string_view bpf);

// The argument vectors probed for one x86_64 syscall.
std::vector<std::array<uint64_t, 6>> probe_arguments(const ir::SyscallPolicy& policy,
                                                     const ir::SyscallInfo& info);

}  // namespace zpolicy::compiler
