#pragma once

// A system call as `inspect --syscall` and `explain --syscall` take it from the user:
// parsed once for both. Internal to api/.

#include <array>
#include <cstdint>
#include <string>
#include <variant>

#include "ir/syscall_table.hpp"
#include "zpolicy/zpolicy.hpp"

namespace zpolicy::api {

struct ParsedCall {
  ir::Arch arch = ir::Arch::X86_64;
  uint32_t nr = 0;                          // without the x32 bit
  const ir::SyscallInfo* info = nullptr;    // none for a number the table does not know
  std::array<uint64_t, 6> args{};
};

// The call, or the reason (for "<command line>") why it is not one. With `names`, an
// argument may also be a constant's name for that argument (AF_UNIX, SOCK_STREAM,
// CLONE_NEWUSER|CLONE_NEWNET).
std::variant<ParsedCall, std::string> parse_call(const SyscallCall& call, bool names);

}  // namespace zpolicy::api
