#include "ir/syscall_table.hpp"

#include <algorithm>

namespace zpolicy::ir {
namespace {

using W = ArgWidth;
#include "ir/syscall_table_data.inc"

}  // namespace

const char* to_string(Arch a) {
  switch (a) {
    case Arch::X86_64:
      return "x86_64";
    case Arch::X32:
      return "x32";
    case Arch::I386:
      return "i386";
  }
  return "x86_64";
}

std::optional<Arch> parse_arch(std::string_view name) {
  if (name == "x86_64") return Arch::X86_64;
  if (name == "x32") return Arch::X32;
  if (name == "i386") return Arch::I386;
  return std::nullopt;
}

uint32_t audit_arch(Arch a) { return a == Arch::I386 ? kAuditArchI386 : kAuditArchX86_64; }

std::span<const SyscallInfo> syscall_table(Arch a) {
  switch (a) {
    case Arch::X86_64:
      return kX8664Table;
    case Arch::X32:
      return kX32Table;
    case Arch::I386:
      return kI386Table;
  }
  return {};
}

const SyscallInfo* find_syscall(Arch a, std::string_view name) {
  for (const auto& s : syscall_table(a))
    if (s.name == name) return &s;
  return nullptr;
}

const SyscallInfo* find_syscall(Arch a, uint32_t nr) {
  auto table = syscall_table(a);
  auto it = std::lower_bound(table.begin(), table.end(), nr,
                             [](const SyscallInfo& s, uint32_t n) { return s.nr < n; });
  return it != table.end() && it->nr == nr ? &*it : nullptr;
}

uint32_t max_syscall_number(Arch a) { return syscall_table(a).back().nr; }

}  // namespace zpolicy::ir
