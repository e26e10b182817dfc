// `inspect`: artifacts read back by the analyzer's readers (the BPF disassembler and the
// single-call interpreter), so that what the command line shows an embedder can get too.
#include <algorithm>
#include <cstdint>
#include <sstream>

#include "zpolicy/zpolicy.hpp"
#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy {
namespace {

bool looks_binary(const std::string& bytes) { return bytes.find('\0') != std::string::npos; }

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

TextResult refused(const std::string& file, std::string message) {
  TextResult out;
  out.exit_code = kExitUsage;
  out.diagnostics.push_back({"", Severity::Error, file, 0, 0, std::move(message), {}});
  return out;
}

TextResult usage_error(std::string message) { return refused("<command line>", std::move(message)); }

}  // namespace

TextResult inspect(const std::string& name, const std::string& bytes) {
  TextResult out;
  if (!name.ends_with(".bpf") && !looks_binary(bytes)) {
    out.text = bytes;
    return out;
  }
  std::string error;
  if (!compiler::parse_bpf(bytes, &error)) return refused(name, error);
  out.text = compiler::disassemble_bpf(std::string_view(bytes));
  return out;
}

TextResult evaluate_syscall(const std::string& name, const std::string& program,
                            const SyscallCall& call) {
  const auto arch = ir::parse_arch(call.arch);
  if (!arch) return usage_error("invalid --arch (expected x86_64, x32 or i386)");
  const ir::SyscallInfo* info = ir::find_syscall(*arch, call.syscall);
  // The table stores x32 numbers with the x32 bit; evaluate_bpf adds it itself.
  uint32_t nr = 0;
  if (info) {
    nr = info->nr & ~ir::kX32SyscallBit;
  } else if (auto number = parse_u64(call.syscall); number || looks_numeric(call.syscall)) {
    // seccomp_data.nr is 32 bits: a wider number would be cut to another call.
    if (!number || *number > 0xffffffffu)
      return usage_error("invalid --syscall " + call.syscall +
                         ": a system call number is 32 bits (at most 4294967295)");
    nr = static_cast<uint32_t>(*number);
  } else {
    return usage_error("unknown syscall '" + call.syscall + "' for " + ir::to_string(*arch));
  }
  // An i386 register holds 32 bits, so no i386 call carries a wider argument.
  const uint64_t widest = *arch == ir::Arch::I386 ? 0xffffffffu : ~uint64_t{0};
  std::array<uint64_t, 6> args{};
  for (size_t i = 0; i < call.args.size(); ++i) {
    auto v = parse_u64(call.args[i]);
    if (!v || i >= args.size() || *v > widest)
      return usage_error("invalid --args '" + call.args[i] +
                         "' (at most 6 numbers, decimal or 0x hex, " +
                         (widest == ~uint64_t{0} ? "64" : "32") + " bits each for " +
                         ir::to_string(*arch) + ")");
    args[i] = *v;
  }
  std::string error;
  auto eval = compiler::evaluate_bpf(program, *arch, nr, args, 0, &error);
  if (!eval) return refused(name, error);
  std::ostringstream text;
  text << call.syscall << " (" << ir::to_string(*arch) << " #" << nr
       << "): " << (eval->action ? eval->action->str() : compiler::seccomp_ret_name(eval->ret))
       << " (ret 0x" << std::hex << eval->ret << std::dec << ", " << eval->executed
       << " instructions)\n";
  TextResult out;
  out.text = text.str();
  return out;
}

}  // namespace zpolicy
