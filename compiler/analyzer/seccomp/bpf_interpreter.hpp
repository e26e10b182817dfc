#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"
#include "ir/result.hpp"
#include "ir/syscall_policy.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::compiler {

// This interpreter is written independently of the emitter it checks: it knows the
// kernel's instruction set, not the emitter's habits.

// struct seccomp_data, field for field.
struct SeccompData {
  uint32_t nr = 0;
  uint32_t arch = 0;
  uint64_t instruction_pointer = 0;
  std::array<uint64_t, 6> args{};
};

// Splits the raw bytes of a program (host byte order) into instructions and checks them
// against every rule the kernel's loader applies (bpf_loader_rules.hpp). An error is
// located at seccomp.bpf and names the instruction.
ir::Result<std::vector<BpfInsn>> parse_bpf(std::string_view bytes);

struct BpfRun {
  uint32_t ret = 0;  // the filter's return value
  // Instructions executed, the return included: at most the 4096 of a checked program,
  // whose jumps only go forward. Four bytes rather than eight: the verifier keeps a run
  // for every number of every arch it sweeps.
  uint32_t executed = 0;
  // Whether an executed load read an argument or the instruction pointer. When none did,
  // the path, and so the answer, is the same for every argument vector: control flow
  // depends only on loaded data.
  bool read_arguments = false;
};

// Runs a checked program on one call. A program that falls off its end or divides by
// zero returns 0 (SECCOMP_RET_KILL_THREAD), as the kernel treats it. With `trace`, the
// index of every executed instruction is appended to it.
BpfRun run_bpf(std::span<const BpfInsn> program, const SeccompData& data,
               std::vector<uint32_t>* trace = nullptr);

// run_bpf for each call: element i is run_bpf(program, calls[i]). The calls are followed
// together while they take the same path: an instruction that reads no word in which
// they differ (or only moves one, or masks it with `and #k`) runs once for all of them,
// and a comparison of such a word with a constant splits them by their own words.
// Anything else done with such a word (other arithmetic, a comparison with one in X,
// returning it) falls back to run_bpf for each call that reached it, so every answer is
// run_bpf's. The verifier probes each number with a hundred argument vectors that a
// filter tells apart with one or two comparisons: each call then costs those
// comparisons, not its path.
std::vector<BpfRun> run_bpf_for_calls(std::span<const BpfInsn> program,
                                      std::span<const SeccompData> calls);

// run_bpf for each number base .. base + count - 1 on one arch, every argument and the
// instruction pointer zero: element i is the run for number base + i. The numbers are
// followed as ranges: a comparison of the loaded number with a constant cuts the range
// in constant time, where run_bpf_for_calls would test each number. Anything else done
// with the number (arithmetic, a bit test, a copy, a comparison with X, returning it)
// falls back to run_bpf for each number of the range, so every answer is run_bpf's.
std::vector<BpfRun> run_bpf_for_numbers(std::span<const BpfInsn> program, uint32_t arch,
                                        uint32_t base, uint32_t count);

// One call evaluated from raw program bytes, for `zpolicy inspect --syscall`: `nr` is the
// arch's own number (the x32 bit is added for Arch::X32).
struct BpfEvaluation {
  uint32_t ret = 0;
  std::optional<ir::Action> action;  // nullopt for a return the IR has no word for
  size_t executed = 0;
};
ir::Result<BpfEvaluation> evaluate_bpf(std::string_view bytes, ir::Arch arch, uint32_t nr,
                                       const std::array<uint64_t, 6>& args,
                                       uint64_t instruction_pointer);

// The IR action of a seccomp return value, exactly: SECCOMP_RET_KILL_PROCESS is kill,
// SECCOMP_RET_ERRNO keeps its value (capped at MAX_ERRNO, 4095, as the kernel does),
// SECCOMP_RET_ALLOW is allow. nullopt for every action the IR has no word for:
// KILL_THREAD (only the calling thread dies), trap, trace, log, user notification, and
// values no action has. Defined here, inline: the probe sweep decodes the answer to every
// probe, and an out-of-line call returns the optional through memory.
inline std::optional<ir::Action> decode_seccomp_ret(uint32_t ret) {
  constexpr uint32_t kMaxErrno = 4095;
  switch (ret & 0xffff0000u) {
    case 0x80000000u:  // SECCOMP_RET_KILL_PROCESS
      return ir::Action::kill();
    case 0x00050000u:  // SECCOMP_RET_ERRNO
      return ir::Action::errno_(static_cast<uint16_t>(std::min(ret & 0xffffu, kMaxErrno)));
    case 0x7fff0000u:  // SECCOMP_RET_ALLOW
      return ir::Action::allow();
  }
  return std::nullopt;
}

// `v` as printf's `%#x` writes it: 0, or 0x and lowercase hexadecimal digits.
std::string hex_text(uint32_t v);

// The mnemonic and operands of instruction `i`, jump targets absolute ("jeq   #0x1, 5, 7").
std::string instruction_text(std::span<const BpfInsn> program, size_t i);

// The name of the action a return value selects ("allow", "errno(1)", "kill",
// "kill_thread", "trap", "trace", "log", "user_notif", "?").
std::string seccomp_ret_name(uint32_t ret);
// The same for a finding, where "?" would hide what the program does: a value no
// action has is named with its bits ("no action (0x12340000)").
std::string seccomp_action_text(uint32_t ret);

// One instruction per line: index, mnemonic, operands with absolute jump targets, and
// for loads the seccomp_data field, for returns the action. Comparisons made right
// after loading `nr` name the x86_64 syscall.
std::string disassemble_bpf(std::span<const BpfInsn> program);
// Same, from raw bytes; an invalid program yields its error message.
std::string disassemble_bpf(std::string_view bytes);

}  // namespace zpolicy::compiler
