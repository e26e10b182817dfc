#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace zpolicy::ir {

// The Linux x86_64 uapi constants that seccomp rules compare syscall arguments with,
// by the argument they belong to, so that seccomp.txt can say AF_UNIX and TIOCSTI where
// the program holds 0x1 and 0x5412 (tests/unit/syscall_constants_test.cpp holds them to
// the system headers). The one table of them: the emitter's listing, the analyzer's
// reading of it, and the words of `diff` and `explain` all use it.
struct NamedConstant {
  uint64_t value;
  std::string_view name;
};

struct ArgumentConstants {
  std::string_view name;  // the argument's name in the man page ("domain"); empty: unnamed
  std::span<const NamedConstant> constants;  // empty: the argument has no named values
  bool flags = false;  // a bit set (written NAME|NAME), not one of several values
};

ArgumentConstants argument_constants(std::string_view call, unsigned index);

// `value` as argument `index` of `call` names it: a name of an enumerated argument
// that has one, names joined by `|` (and the unnamed rest in hex) for a flag argument
// whose bits are named, otherwise nullopt.
std::optional<std::string> constant_words(std::string_view call, unsigned index, uint64_t value);

// Any name above, and AUDIT_ARCH_X86_64 and AUDIT_ARCH_I386, read back: the one value
// it stands for.
std::optional<uint64_t> constant_value(std::string_view name);

}  // namespace zpolicy::ir
