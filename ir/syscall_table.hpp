#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace zpolicy::ir {

// The ABIs a process on an x86_64 kernel can enter the kernel through. Every one of
// them is audited by the seccomp emitter and its verifier.
enum class Arch { X86_64, X32, I386 };

inline constexpr uint32_t kAuditArchX86_64 = 0xC000003Eu;
inline constexpr uint32_t kAuditArchI386 = 0x40000003u;
inline constexpr uint32_t kX32SyscallBit = 0x40000000u;

const char* to_string(Arch a);
std::optional<Arch> parse_arch(std::string_view name);  // "x86_64", "x32", "i386"
uint32_t audit_arch(Arch a);  // x32 shares AUDIT_ARCH_X86_64 and sets kX32SyscallBit

// The kernel's width of an argument: an `int`/`unsigned int` argument is truncated to
// its low 32 bits by the kernel, so a filter must compare only those bits.
enum class ArgWidth : uint8_t { None, U32, U64 };

struct SyscallInfo {
  std::string_view name;
  uint32_t nr;  // as seen in seccomp_data.nr (x32 numbers include kX32SyscallBit)
  std::array<ArgWidth, 6> args;
};

std::span<const SyscallInfo> syscall_table(Arch a);  // sorted by number
const SyscallInfo* find_syscall(Arch a, std::string_view name);
const SyscallInfo* find_syscall(Arch a, uint32_t nr);
uint32_t max_syscall_number(Arch a);

}  // namespace zpolicy::ir
