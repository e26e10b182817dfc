#include "emitters/seccomp/bpf_assembler.hpp"

#include <stdexcept>

namespace zpolicy::emitters::seccomp {

Label Assembler::new_label() {
  label_pos_.push_back(-1);
  return static_cast<Label>(label_pos_.size() - 1);
}

void Assembler::bind(Label label) {
  label_pos_.at(static_cast<size_t>(label)) = static_cast<int>(code_.size());
}

void Assembler::stmt(uint16_t code, uint32_t k, std::string comment) {
  code_.push_back({code, k, kNext, kNext, std::move(comment)});
}

void Assembler::jump(uint16_t code, uint32_t k, Label jt, Label jf, std::string comment) {
  code_.push_back({code, k, jt, jf, std::move(comment)});
}

void Assembler::ja(Label target, std::string comment) {
  code_.push_back({kJa, 0, target, kNext, std::move(comment)});
}

std::vector<Assembler::Line> Assembler::finish() const {
  std::vector<Pending> code = code_;
  std::vector<int> pos = label_pos_;
  auto target = [&](Label l, size_t at) -> long {
    return l == kNext ? static_cast<long>(at) + 1 : pos.at(static_cast<size_t>(l));
  };
  // Insert trampolines until every conditional offset fits in 8 bits. Insertions only
  // lengthen jumps, so each jump gets at most its two trampolines and the loop ends.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < code.size(); ++i) {
      Pending& p = code[i];
      if (p.code == kJa || (p.code & 0x07) != 0x05) continue;
      const bool far_t = target(p.jt, i) - static_cast<long>(i) - 1 > 255;
      const bool far_f = target(p.jf, i) - static_cast<long>(i) - 1 > 255;
      if (!far_t && !far_f) continue;
      std::vector<Pending> tramp;
      const Label jt = p.jt, jf = p.jf;
      if (far_t) tramp.push_back({kJa, 0, jt, kNext, "(trampoline)"});
      if (far_f) tramp.push_back({kJa, 0, jf, kNext, "(trampoline)"});
      for (auto& lp : pos)
        if (lp > static_cast<int>(i)) lp += static_cast<int>(tramp.size());
      // The trampolines get fresh labels right behind the jump.
      Label first = static_cast<Label>(pos.size());
      for (size_t t = 0; t < tramp.size(); ++t) pos.push_back(static_cast<int>(i + 1 + t));
      const Label old_next = static_cast<Label>(pos.size());
      pos.push_back(static_cast<int>(i + 1 + tramp.size()));
      int n = 0;
      code[i].jt = far_t ? first + n++ : (jt == kNext ? old_next : jt);
      code[i].jf = far_f ? first + n++ : (jf == kNext ? old_next : jf);
      code.insert(code.begin() + static_cast<long>(i) + 1, tramp.begin(), tramp.end());
      changed = true;
      break;
    }
  }
  if (code.size() > 4096) throw std::length_error("seccomp program exceeds 4096 instructions");
  for (size_t i = 0; i < code.size(); ++i) {
    const Pending& p = code[i];
    const bool jumps = (p.code & 0x07) == 0x05;
    if (jumps && (target(p.jt, i) <= static_cast<long>(i) ||
                  (p.code != kJa && target(p.jf, i) <= static_cast<long>(i))))
      throw std::logic_error("seccomp program has an unbound or backward jump");
  }
  std::vector<Line> out;
  out.reserve(code.size());
  for (size_t i = 0; i < code.size(); ++i) {
    const Pending& p = code[i];
    Insn insn{p.code, 0, 0, p.k};
    if (p.code == kJa) {
      insn.k = static_cast<uint32_t>(target(p.jt, i) - static_cast<long>(i) - 1);
    } else if ((p.code & 0x07) == 0x05) {
      insn.jt = static_cast<uint8_t>(target(p.jt, i) - static_cast<long>(i) - 1);
      insn.jf = static_cast<uint8_t>(target(p.jf, i) - static_cast<long>(i) - 1);
    }
    out.push_back({insn, p.comment});
  }
  return out;
}

}  // namespace zpolicy::emitters::seccomp
