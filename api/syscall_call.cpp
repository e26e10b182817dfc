#include "api/syscall_call.hpp"

#include <algorithm>

#include "compiler/review/syscall_words.hpp"

namespace zpolicy::api {
namespace {

// Decimal, or hexadecimal after "0x": nothing else (no sign, no blanks, no octal for a
// leading zero), and nothing that does not fit in 64 bits.
std::optional<uint64_t> parse_u64(const std::string& s) {
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const unsigned base = hex ? 16 : 10;
  const std::string_view digits = std::string_view(s).substr(hex ? 2 : 0);
  if (digits.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : digits) {
    unsigned d;
    if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
    else if (hex && c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
    else if (hex && c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
    else return std::nullopt;
    if (v > (~uint64_t{0} - d) / base) return std::nullopt;
    v = v * base + d;
  }
  return v;
}

// Digits, or 0x and hex digits: a number, whether or not it fits.
bool looks_numeric(const std::string& s) {
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const std::string_view digits = std::string_view(s).substr(hex ? 2 : 0);
  return !digits.empty() && std::all_of(digits.begin(), digits.end(), [hex](char c) {
    return (c >= '0' && c <= '9') || (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
  });
}

}  // namespace

std::variant<ParsedCall, std::string> parse_call(const SyscallCall& call, bool names) {
  ParsedCall out;
  const auto arch = ir::parse_arch(call.arch);
  if (!arch) return std::string("invalid --arch (expected x86_64, x32 or i386)");
  out.arch = *arch;
  out.info = ir::find_syscall(*arch, call.syscall);
  // The table stores x32 numbers with the x32 bit; evaluate_bpf adds it itself.
  if (out.info) {
    out.nr = out.info->nr & ~ir::kX32SyscallBit;
  } else if (auto number = parse_u64(call.syscall); number || looks_numeric(call.syscall)) {
    // seccomp_data.nr is 32 bits: a wider number would be cut to another call.
    if (!number || *number > 0xffffffffu)
      return "invalid --syscall " + call.syscall +
             ": a system call number is 32 bits (at most 4294967295)";
    out.nr = static_cast<uint32_t>(*number);
    out.info = ir::find_syscall(*arch, *arch == ir::Arch::X32 ? out.nr | ir::kX32SyscallBit : out.nr);
  } else {
    return "unknown syscall '" + call.syscall + "' for " + ir::to_string(*arch);
  }
  // An i386 register holds 32 bits, so no i386 call carries a wider argument.
  const uint64_t widest = *arch == ir::Arch::I386 ? 0xffffffffu : ~uint64_t{0};
  const std::string name = out.info ? std::string(out.info->name) : std::string();
  for (size_t i = 0; i < call.args.size(); ++i) {
    auto v = parse_u64(call.args[i]);
    if (!v && names && i < out.args.size())
      v = compiler::review::value_of_words(name, static_cast<unsigned>(i), call.args[i]);
    if (!v || i >= out.args.size() || *v > widest)
      return "invalid --args '" + call.args[i] + "' (at most 6 " +
             (names ? "numbers (decimal or 0x hex) or constant names of that argument"
                    : "numbers, decimal or 0x hex,") +
             (names ? ", " : " ") + (widest == ~uint64_t{0} ? "64" : "32") +
             " bits each for " + ir::to_string(*arch) + ")";
    out.args[i] = *v;
  }
  return out;
}

}  // namespace zpolicy::api
