#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zpolicy::emitters::seccomp {

// Classic BPF opcodes used by seccomp programs (linux/filter.h, kept here so that the
// emitter compiles on every host).
inline constexpr uint16_t kLdAbsW = 0x20;   // BPF_LD | BPF_W | BPF_ABS
inline constexpr uint16_t kAluAndK = 0x54;  // BPF_ALU | BPF_AND | BPF_K
inline constexpr uint16_t kJa = 0x05;       // BPF_JMP | BPF_JA
inline constexpr uint16_t kJeqK = 0x15;
inline constexpr uint16_t kJgtK = 0x25;
inline constexpr uint16_t kJgeK = 0x35;
inline constexpr uint16_t kJsetK = 0x45;
inline constexpr uint16_t kRetK = 0x06;

inline constexpr uint32_t kOffsetNr = 0;
inline constexpr uint32_t kOffsetArch = 4;
inline constexpr uint32_t arg_offset(unsigned index, bool high) {
  return 16 + 8 * index + (high ? 4 : 0);  // seccomp_data.args, little-endian words
}

// A jump target that is bound to an instruction later on. Its name is what the listing
// calls it: unique in the program, and derived from what it stands for (the syscall
// numbers a subtree decides), not from where it lands, so that a one-line policy edit
// leaves the rest of the listing as it was.
using Label = int;
inline constexpr Label kNext = -1;  // the instruction right after the jump

// One resolved instruction, as the kernel reads it (struct sock_filter).
struct Insn {
  uint16_t code = 0;
  uint8_t jt = 0;
  uint8_t jf = 0;
  uint32_t k = 0;
};

// Collects instructions with symbolic forward jumps and lays them out: a conditional
// jump can reach only 255 instructions ahead, so a far target gets an unconditional
// `ja` trampoline placed right behind the jump.
class Assembler {
 public:
  Label new_label(std::string name);
  void bind(Label label);  // to the next instruction emitted
  // `k_text`: the constant as the listing writes it (a name); empty for hexadecimal.
  void stmt(uint16_t code, uint32_t k, std::string comment = {}, std::string k_text = {});
  void jump(uint16_t code, uint32_t k, Label jt, Label jf, std::string comment = {},
            std::string k_text = {});
  void ja(Label target, std::string comment = {});

  struct Line {
    Insn insn;
    std::string comment;
    std::vector<std::string> labels;  // the names jumps reach this instruction by
    std::string k_text;
    std::string jt_text, jf_text;  // a jump's targets: a label's name, or "next"
  };
  // Resolves every label. Throws std::length_error past the kernel's 4096 instructions.
  std::vector<Line> finish() const;

 private:
  struct Pending {
    uint16_t code;
    uint32_t k;
    Label jt, jf;  // for kJa: jt is the target
    std::string comment;
    std::string k_text;
  };
  std::vector<Pending> code_;
  std::vector<int> label_pos_;  // label -> index of the instruction it names
  std::vector<std::string> label_names_;
};

}  // namespace zpolicy::emitters::seccomp
