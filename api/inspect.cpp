// `inspect`: artifacts read back by the analyzer's readers (the BPF disassembler and the
// single-call interpreter), so that what the command line shows an embedder can get too.
#include <algorithm>
#include <cstdint>
#include <sstream>

#include "api/syscall_call.hpp"
#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy {
namespace {

bool looks_binary(const std::string& bytes) { return bytes.find('\0') != std::string::npos; }

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
  if (const auto prog = compiler::parse_bpf(bytes); !prog)
    return refused(name, prog.error().message);
  out.text = compiler::disassemble_bpf(std::string_view(bytes));
  return out;
}

TextResult evaluate_syscall(const std::string& name, const std::string& program,
                            const SyscallCall& call) {
  const auto parsed = api::parse_call(call, false);
  if (const auto* why = std::get_if<std::string>(&parsed)) return usage_error(*why);
  const api::ParsedCall& c = std::get<api::ParsedCall>(parsed);
  auto eval = compiler::evaluate_bpf(program, c.arch, c.nr, c.args, 0);
  if (!eval) return refused(name, eval.error().message);
  std::ostringstream text;
  text << call.syscall << " (" << ir::to_string(c.arch) << " #" << c.nr
       << "): " << (eval->action ? eval->action->str() : compiler::seccomp_ret_name(eval->ret))
       << " (ret 0x" << std::hex << eval->ret << std::dec << ", " << eval->executed
       << " instructions)\n";
  TextResult out;
  out.text = text.str();
  return out;
}

}  // namespace zpolicy
