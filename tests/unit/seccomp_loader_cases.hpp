#pragma once

// Programs that break exactly one rule of the kernel's seccomp loader, each with a
// variant that meets it, shared by the unit test of the rules and by the mutation
// tier's check against the kernel itself.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"

namespace zpolicy::test {

using compiler::BpfInsn;

inline std::string bytes_of(const std::vector<BpfInsn>& prog) {
  std::string out(prog.size() * sizeof(BpfInsn), '\0');
  // An empty vector's data() may be null, and memcpy from null is undefined even for 0 bytes.
  if (!prog.empty()) std::memcpy(out.data(), prog.data(), out.size());
  return out;
}

struct LoaderCase {
  std::string rule;
  std::vector<BpfInsn> refused, accepted;
  std::optional<size_t> instruction;  // what the refusal names
  std::string says;                   // part of the refusal's text
};

inline std::vector<LoaderCase> loader_cases() {
  constexpr uint32_t kAllow = 0x7fff0000u;
  const BpfInsn ret{0x06, 0, 0, kAllow}, ret_a{0x16, 0, 0, 0}, ld_nr{0x20, 0, 0, 0};
  std::vector<LoaderCase> out;
  out.push_back({"length", {}, {ret}, std::nullopt, "1 to 4096"});
  {
    std::vector<BpfInsn> long_prog(4097, BpfInsn{0x00, 0, 0, 0}), ok(4096, BpfInsn{0x00, 0, 0, 0});
    long_prog.back() = ret;
    ok.back() = ret;
    out.push_back({"length", long_prog, ok, std::nullopt, "1 to 4096"});
  }
  out.push_back({"opcode",
                 {ld_nr, {0x99, 0, 0, 0}, ret},
                 {ld_nr, {0x04, 0, 0, 1}, ret},
                 1,
                 "unknown opcode"});
  // ALU|ADD|K with a bit above the low byte: the kernel compares the whole 16 bits.
  out.push_back({"opcode-high-bits",
                 {ld_nr, {0x104, 0, 0, 1}, ret},
                 {ld_nr, {0x04, 0, 0, 1}, ret},
                 1,
                 "unknown opcode"});
  out.push_back({"division-by-zero",
                 {ld_nr, {0x34, 0, 0, 0}, ret},
                 {ld_nr, {0x34, 0, 0, 2}, ret},
                 1,
                 "division by the constant 0"});
  out.push_back({"modulo-by-zero",
                 {ld_nr, {0x94, 0, 0, 0}, ret},
                 {ld_nr, {0x34, 0, 0, 2}, ret},
                 1,
                 "division by the constant 0"});
  out.push_back({"shift-32",
                 {ld_nr, {0x64, 0, 0, 32}, ret},
                 {ld_nr, {0x64, 0, 0, 31}, ret},
                 1,
                 "shift by a constant of 32"});
  out.push_back({"shift-32",
                 {ld_nr, {0x74, 0, 0, 0xffffffffu}, ret},
                 {ld_nr, {0x74, 0, 0, 1}, ret},
                 1,
                 "shift by a constant of 32"});
  out.push_back({"scratch-index",
                 {ld_nr, {0x02, 0, 0, 16}, ret},
                 {ld_nr, {0x02, 0, 0, 15}, ret},
                 1,
                 "past M[15]"});
  out.push_back({"scratch-index",
                 {ld_nr, {0x02, 0, 0, 0}, {0x61, 0, 0, 16}, ret},
                 {ld_nr, {0x02, 0, 0, 0}, {0x61, 0, 0, 0}, ret},
                 2,
                 "past M[15]"});
  out.push_back(
      {"ja-range", {{0x05, 0, 0, 1}, ret}, {{0x05, 0, 0, 0}, ret}, 0, "jump past the last"});
  out.push_back({"jt-range",
                 {ld_nr, {0x15, 2, 0, 1}, ret, ret},
                 {ld_nr, {0x15, 1, 0, 1}, ret, ret},
                 1,
                 "jump past the last"});
  out.push_back({"jf-range",
                 {ld_nr, {0x35, 0, 2, 1}, ret, ret},
                 {ld_nr, {0x35, 0, 1, 1}, ret, ret},
                 1,
                 "jump past the last"});
  // An ancillary-data offset (SKF_AD_OFF and up): classic BPF may know it, seccomp
  // refuses every load outside struct seccomp_data.
  out.push_back({"ancillary",
                 {{0x20, 0, 0, 0xfffff000u}, ret},
                 {{0x20, 0, 0, 4}, ret},
                 0,
                 "outside struct seccomp_data"});
  out.push_back({"last-ret", {ld_nr, ret, ld_nr}, {ld_nr, ld_nr, ret_a}, 2, "not a return"});
  out.push_back({"scratch-before-store",
                 {{0x60, 0, 0, 3}, ret},
                 {{0x02, 0, 0, 3}, {0x60, 0, 0, 3}, ret},
                 0,
                 "M[3] is read before"});
  // Stored on the taken branch only, read after the branches join.
  out.push_back({"scratch-one-branch",
                 {ld_nr, {0x15, 0, 1, 1}, {0x02, 0, 0, 5}, {0x60, 0, 0, 5}, ret},
                 {ld_nr, {0x02, 0, 0, 5}, {0x15, 0, 0, 1}, {0x60, 0, 0, 5}, ret},
                 3,
                 "M[5] is read before"});
  // After a return the kernel carries the state on as if it fell through.
  // Here the only way to the read is the `ja`, which stored M[0]; the return before it
  // did not, and the kernel refuses.
  const BpfInsn st0{0x02, 0, 0, 0}, ld0{0x60, 0, 0, 0};
  out.push_back({"scratch-after-ret",
                 {ld_nr, {0x15, 0, 2, 1}, st0, {0x05, 0, 0, 1}, ret, ld0, ret},
                 {ld_nr, st0, {0x15, 0, 2, 1}, st0, {0x05, 0, 0, 1}, ret, ld0, ret},
                 5,
                 "M[0] is read before"});
  out.push_back({"seccomp-opcode-mod",
                 {ld_nr, {0x94, 0, 0, 3}, ret},
                 {ld_nr, {0x34, 0, 0, 3}, ret},
                 1,
                 "not allowed in a seccomp filter"});
  out.push_back({"seccomp-opcode-ld-half",
                 {{0x28, 0, 0, 0}, ret},
                 {{0x20, 0, 0, 0}, ret},
                 0,
                 "not allowed in a seccomp filter"});
  out.push_back({"seccomp-opcode-ind",
                 {{0x40, 0, 0, 0}, ret},
                 {{0x20, 0, 0, 0}, ret},
                 0,
                 "not allowed in a seccomp filter"});
  out.push_back({"seccomp-opcode-msh",
                 {{0xb1, 0, 0, 0}, ret},
                 {{0x01, 0, 0, 0}, ret},
                 0,
                 "not allowed in a seccomp filter"});
  out.push_back({"load-outside",
                 {{0x20, 0, 0, 64}, ret},
                 {{0x20, 0, 0, 60}, ret},
                 0,
                 "outside struct seccomp_data"});
  out.push_back(
      {"load-unaligned", {{0x20, 0, 0, 2}, ret}, {{0x20, 0, 0, 8}, ret}, 0, "not 4-byte aligned"});
  return out;
}

}  // namespace zpolicy::test
