#include "emitters/seccomp/bpf_assembler.hpp"

#include <stdexcept>

namespace zpolicy::emitters::seccomp {

Label Assembler::new_label(std::string name) {
  label_pos_.push_back(-1);
  label_names_.push_back(std::move(name));
  return static_cast<Label>(label_pos_.size() - 1);
}

void Assembler::bind(Label label) {
  label_pos_.at(static_cast<size_t>(label)) = static_cast<int>(code_.size());
}

void Assembler::stmt(uint16_t code, uint32_t k, std::string comment, std::string k_text) {
  code_.push_back({code, k, kNext, kNext, std::move(comment), std::move(k_text)});
}

void Assembler::jump(uint16_t code, uint32_t k, Label jt, Label jf, std::string comment,
                     std::string k_text) {
  code_.push_back({code, k, jt, jf, std::move(comment), std::move(k_text)});
}

void Assembler::ja(Label target, std::string comment) {
  code_.push_back({kJa, 0, target, kNext, std::move(comment), {}});
}

std::vector<Assembler::Line> Assembler::finish() const {
  std::vector<Pending> code = code_;
  std::vector<int> pos = label_pos_;
  std::vector<std::string> names = label_names_;
  auto target = [&](Label l, size_t at) -> long {
    return l == kNext ? static_cast<long>(at) + 1 : pos.at(static_cast<size_t>(l));
  };
  int trampolines = 0;
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
      if (far_t) tramp.push_back({kJa, 0, jt, kNext, "(trampoline)", {}});
      if (far_f) tramp.push_back({kJa, 0, jf, kNext, "(trampoline)", {}});
      for (auto& lp : pos)
        if (lp > static_cast<int>(i)) lp += static_cast<int>(tramp.size());
      // The trampolines get fresh labels right behind the jump.
      Label first = static_cast<Label>(pos.size());
      for (size_t t = 0; t < tramp.size(); ++t) {
        pos.push_back(static_cast<int>(i + 1 + t));
        names.push_back("trampoline." + std::to_string(++trampolines));
      }
      const Label old_next = static_cast<Label>(pos.size());
      pos.push_back(static_cast<int>(i + 1 + tramp.size()));
      names.push_back("past.trampoline." + std::to_string(trampolines));
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
  auto text = [&](Label l) { return l == kNext ? std::string("next") : names.at(l); };
  std::vector<std::vector<Label>> bound(code.size() + 1);
  std::vector<bool> reached(pos.size(), false);
  for (const Pending& p : code) {
    if ((p.code & 0x07) != 0x05) continue;
    if (p.jt != kNext) reached.at(p.jt) = true;
    if (p.code != kJa && p.jf != kNext) reached.at(p.jf) = true;
  }
  for (size_t l = 0; l < pos.size(); ++l)
    if (reached[l]) bound.at(pos[l]).push_back(static_cast<Label>(l));
  for (size_t i = 0; i < code.size(); ++i) {
    const Pending& p = code[i];
    Line line{{p.code, 0, 0, p.k}, p.comment, {}, p.k_text, {}, {}};
    for (Label l : bound[i]) line.labels.push_back(names.at(l));
    if (p.code == kJa) {
      line.insn.k = static_cast<uint32_t>(target(p.jt, i) - static_cast<long>(i) - 1);
      line.jt_text = text(p.jt);
    } else if ((p.code & 0x07) == 0x05) {
      line.insn.jt = static_cast<uint8_t>(target(p.jt, i) - static_cast<long>(i) - 1);
      line.insn.jf = static_cast<uint8_t>(target(p.jf, i) - static_cast<long>(i) - 1);
      line.jt_text = text(p.jt);
      line.jf_text = text(p.jf);
    }
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace zpolicy::emitters::seccomp
