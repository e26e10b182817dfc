#include "emitters/seccomp/seccomp_emitter.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "emitters/seccomp/bpf_assembler.hpp"
#include "emitters/seccomp/decision_tree.hpp"
#include "emitters/seccomp/syscall_weights.hpp"
#include "ir/syscall_constants.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::emitters::seccomp {
namespace {

constexpr uint32_t kRetAllow = 0x7fff0000u;
constexpr uint32_t kRetErrno = 0x00050000u;
constexpr uint32_t kRetKillProcess = 0x80000000u;

uint32_t ret_value(const ir::Action& a) {
  switch (a.kind) {
    case ir::Action::Kind::Allow:
      return kRetAllow;
    case ir::Action::Kind::Errno:
      return kRetErrno | a.errno_value;
    case ir::Action::Kind::Kill:
      return kRetKillProcess;
  }
  return kRetKillProcess;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

// What one syscall number leads to: a fixed answer, or the rules to test in order.
struct Leaf {
  ir::Action action;                      // the fixed answer, or the fall-back one
  const ir::SyscallInfo* info = nullptr;  // set when the leaf tests arguments
  std::vector<const ir::SyscallRule*> chain;
};

struct Interval {
  uint32_t lo, hi;
  size_t leaf;
  uint64_t weight;
};

// The rules of one syscall in the order that makes "first applying rule wins" equal to
// "most restrictive applying rule wins"; rules that can never decide are dropped.
std::vector<const ir::SyscallRule*> decision_chain(std::vector<const ir::SyscallRule*> rules,
                                                   const ir::Action& fallback) {
  std::erase_if(rules, [](const ir::SyscallRule* r) {
    return std::any_of(r->conditions.begin(), r->conditions.end(),
                       [](const ir::ArgCondition& c) { return c.index >= 6; });
  });
  // Ties are broken by the conditions, so that the program does not depend on the
  // order the rules were written in.
  auto key = [](const ir::SyscallRule* r) {
    std::vector<std::tuple<unsigned, int, uint64_t, uint64_t>> k;
    for (const auto& c : r->conditions)
      k.emplace_back(c.index, static_cast<int>(c.op), c.value, c.mask);
    return k;
  };
  std::sort(rules.begin(), rules.end(), [&](const auto* a, const auto* b) {
    if (a->action != b->action) return ir::more_restrictive(a->action, b->action);
    return key(a) < key(b);
  });
  rules.erase(std::unique(rules.begin(), rules.end(),
                          [&](const auto* a, const auto* b) {
                            return a->action == b->action && key(a) == key(b);
                          }),
              rules.end());
  auto uncond = std::find_if(rules.begin(), rules.end(),
                             [](const auto* r) { return r->conditions.empty(); });
  if (uncond != rules.end()) rules.erase(uncond + 1, rules.end());
  while (!rules.empty() && rules.back()->action == fallback) rules.pop_back();
  return rules;
}

struct Plan {
  std::vector<Leaf> leaves;
  std::vector<Interval> intervals;
  std::set<std::string> foreign_names;  // rule names the x86_64 table does not know
};

Plan plan(const ir::SyscallPolicy& policy) {
  Plan p;
  std::map<std::string_view, std::vector<const ir::SyscallRule*>> by_name;
  for (const auto& r : policy.rules) {
    if (ir::find_syscall(ir::Arch::X86_64, r.name) == nullptr)
      p.foreign_names.insert(r.name);
    else
      by_name[r.name].push_back(&r);
  }
  std::map<uint32_t, size_t> constant_leaf;  // ret value -> leaf
  auto constant = [&](const ir::Action& a) {
    auto [it, fresh] = constant_leaf.emplace(ret_value(a), p.leaves.size());
    if (fresh) p.leaves.push_back({a, nullptr, {}});
    return it->second;
  };
  auto push = [&](uint32_t lo, uint32_t hi, size_t leaf, uint64_t weight) {
    auto& iv = p.intervals;
    if (!iv.empty() && iv.back().leaf == leaf && p.leaves[leaf].info == nullptr &&
        iv.back().hi + 1 == lo) {
      iv.back().hi = hi;
      iv.back().weight += weight;
    } else {
      // Every interval weighs at least 1 so that calls the mix never made still get a
      // balanced subtree instead of an arbitrary deep one.
      iv.push_back({lo, hi, leaf, weight + 1});
    }
  };
  const size_t unknown = constant(policy.unknown_number_action);
  const size_t foreign = constant(policy.foreign_abi_action);
  uint32_t next = 0;
  for (const auto& s : ir::syscall_table(ir::Arch::X86_64)) {
    if (s.nr > next) push(next, s.nr - 1, unknown, 0);
    const auto named = by_name.find(s.name);
    auto chain = named == by_name.end() ? std::vector<const ir::SyscallRule*>{}
                                        : decision_chain(named->second, policy.default_action);
    size_t leaf;
    if (chain.empty())
      leaf = constant(policy.default_action);
    else if (chain.front()->conditions.empty())
      leaf = constant(chain.front()->action);
    else {
      leaf = p.leaves.size();
      p.leaves.push_back({policy.default_action, &s, std::move(chain)});
    }
    push(s.nr, s.nr, leaf, syscall_weight(s.name));
    next = s.nr + 1;
  }
  // Without the x32 bit, numbers past the table are unknown; with it, the call comes
  // through the x32 ABI.
  push(next, ir::kX32SyscallBit - 1, unknown, 0);
  push(ir::kX32SyscallBit, 0x7fffffffu, foreign, 0);
  push(0x80000000u, 0x80000000u | (ir::kX32SyscallBit - 1), unknown, 0);
  push(0x80000000u | ir::kX32SyscallBit, 0xffffffffu, foreign, 0);
  return p;
}

std::string nr_name(uint32_t nr) {
  const ir::SyscallInfo* s = ir::find_syscall(ir::Arch::X86_64, nr);
  return s ? std::string(s->name) + "(" + std::to_string(nr) + ")" : hex(nr);
}

// The syscall's name, or the number in hexadecimal where no syscall has it.
std::string bare_nr_name(uint32_t nr) {
  const ir::SyscallInfo* s = ir::find_syscall(ir::Arch::X86_64, nr);
  return s ? std::string(s->name) : hex(nr);
}

// An argument constant as the listing writes it: by name where the argument has named
// values (a mask only where the argument is a bit set), otherwise in hexadecimal.
std::string value_text(std::string_view call, unsigned index, uint64_t v, bool mask) {
  if (mask && !ir::argument_constants(call, index).flags) return hex(v);
  return ir::constant_words(call, index, v).value_or(hex(v));
}

class Generator {
 public:
  explicit Generator(const Plan& p) : p_(p) {}

  std::vector<Assembler::Line> run(const ir::SyscallPolicy& policy) {
    std::vector<uint64_t> weights;
    for (const auto& iv : p_.intervals) weights.push_back(iv.weight);
    tree_ = optimal_alphabetic_tree(weights);
    const Label native = a_.new_label("x86_64");
    a_.stmt(kLdAbsW, kOffsetArch, "arch");
    a_.jump(kJeqK, ir::kAuditArchX86_64, native, kNext, {}, "AUDIT_ARCH_X86_64");
    a_.stmt(kRetK, ret_value(policy.foreign_abi_action),
            policy.foreign_abi_action.str() + "  # i386 and any other arch");
    bind(native);
    a_.stmt(kLdAbsW, kOffsetNr, "nr");
    subtree(0, p_.intervals.size() - 1);
    return a_.finish();
  }

 private:
  // The numbers intervals i..j decide: "link..readlink", "ioctl". No two subtrees share
  // them, and they stay the same when the tree changes elsewhere.
  std::string range_name(size_t i, size_t j) const {
    const uint32_t lo = p_.intervals[i].lo, hi = p_.intervals[j].hi;
    return lo == hi ? bare_nr_name(lo) : bare_nr_name(lo) + ".." + bare_nr_name(hi);
  }

  void subtree(size_t i, size_t j) {
    if (i == j) return leaf(p_.intervals[i]);
    const size_t r = tree_.split(i, j);
    const uint32_t bound = p_.intervals[r + 1].lo;
    const std::string k_text = bare_nr_name(bound);
    // Subtrees are laid out in number order, whatever their weights: a policy edit that
    // reshapes one part of the tree then moves no other part in the listing. Every path
    // runs the same comparisons in either order.
    const Label later = a_.new_label(range_name(r + 1, j));
    a_.jump(kJgeK, bound, later, kNext, {}, k_text);
    subtree(i, r);
    bind(later);
    subtree(r + 1, j);
  }

  void leaf(const Interval& iv) {
    const Leaf& l = p_.leaves[iv.leaf];
    if (l.info == nullptr) {
      const std::string range =
          iv.lo == iv.hi ? nr_name(iv.lo) : nr_name(iv.lo) + ".." + nr_name(iv.hi);
      a_.stmt(kRetK, ret_value(l.action), l.action.str() + "  # " + range);
      return;
    }
    const std::string name(l.info->name);
    leaf_name_ = name;
    local_labels_ = 0;
    loaded_.reset();  // A holds the syscall number here
    for (size_t k = 0; k < l.chain.size();) {
      const size_t group = bit_group(l, k);
      const ir::Action action = l.chain[k]->action;
      const Label match = local_label(), miss = local_label();
      // When every jump to `miss` comes from one compare of one word, the next rule
      // finds that word still in A and need not load it again.
      std::optional<uint32_t> at_miss;
      if (group > 1) {
        at_miss = any_bit(l, k, group, match, miss);
        k += group;
      } else {
        const auto& conds = l.chain[k]->conditions;
        for (size_t c = 0; c < conds.size(); ++c) {
          const Label pass = c + 1 == conds.size() ? match : local_label();
          condition(name, conds[c], width(l, conds[c].index), pass, miss);
          if (pass != match) bind(pass);
        }
        if (conds.size() == 1 && conds[0].op != ir::CmpOp::MaskedEq &&
            width(l, conds[0].index) == ir::ArgWidth::U32)
          at_miss = arg_offset(conds[0].index, false);
        k += 1;
      }
      bind(match);
      a_.stmt(kRetK, ret_value(action), action.str() + "  # " + name);
      bind(miss);
      loaded_ = at_miss;
    }
    a_.stmt(kRetK, ret_value(l.action), l.action.str() + "  # " + name);
  }

  // A label inside the leaf being generated: "ioctl.1", "ioctl.2", ...
  Label local_label() { return a_.new_label(leaf_name_ + "." + std::to_string(++local_labels_)); }

  static ir::ArgWidth width(const Leaf& l, unsigned index) {
    const ir::ArgWidth w = l.info->args[index];
    return w == ir::ArgWidth::U32 ? w : ir::ArgWidth::U64;
  }

  static uint64_t width_bits(ir::ArgWidth w) {
    return w == ir::ArgWidth::U32 ? 0xffffffffu : ~uint64_t{0};
  }

  // A rule "arg & bit == bit" for one bit: consecutive such rules with the same action
  // and argument test together with one JSET per word.
  static bool single_bit_rule(const Leaf& l, size_t k, const ir::SyscallRule* first) {
    const ir::SyscallRule* r = l.chain[k];
    if (r->conditions.size() != 1 || r->action != first->action) return false;
    const auto& c = r->conditions[0];
    if (c.op != ir::CmpOp::MaskedEq || c.index != first->conditions[0].index) return false;
    const uint64_t bits = width_bits(width(l, c.index));
    const uint64_t m = c.mask & bits;
    return std::popcount(m) == 1 && (c.value & bits) == m;
  }

  static size_t bit_group(const Leaf& l, size_t k) {
    const ir::SyscallRule* first = l.chain[k];
    size_t n = 0;
    while (k + n < l.chain.size() && single_bit_rule(l, k + n, first)) ++n;
    return n;
  }

  // Returns the word A holds at `miss` when only one word is tested.
  std::optional<uint32_t> any_bit(const Leaf& l, size_t k, size_t n, Label match, Label miss) {
    const unsigned index = l.chain[k]->conditions[0].index;
    const uint64_t bits = width_bits(width(l, index));
    uint64_t mask = 0;
    for (size_t i = 0; i < n; ++i) mask |= l.chain[k + i]->conditions[0].mask & bits;
    const std::string arg = std::string(l.info->name) + " arg" + std::to_string(index);
    const std::string call(l.info->name);
    if (mask >> 32) {
      const Label low = local_label();
      load(arg_offset(index, true), arg + " high word");
      a_.jump(kJsetK, static_cast<uint32_t>(mask >> 32), match,
              static_cast<uint32_t>(mask) ? low : miss,
              arg + " has any bit of " + hex(mask >> 32) + " (high word)");
      bind(low);
    }
    if (static_cast<uint32_t>(mask)) {
      const std::string bits = value_text(call, index, static_cast<uint32_t>(mask), true);
      load(arg_offset(index, false), arg + " low word");
      a_.jump(kJsetK, static_cast<uint32_t>(mask), match, miss, arg + " has any bit of " + bits,
              bits);
    }
    if (mask >> 32) return std::nullopt;
    return arg_offset(index, false);
  }

  void word_compare(ir::CmpOp op, uint32_t v, Label t, Label f, const std::string& what,
                    const std::string& v_text) {
    switch (op) {
      case ir::CmpOp::Eq:
      case ir::CmpOp::MaskedEq:
        return a_.jump(kJeqK, v, t, f, what, v_text);
      case ir::CmpOp::Ne:
        return a_.jump(kJeqK, v, f, t, what, v_text);
      case ir::CmpOp::Gt:
        return a_.jump(kJgtK, v, t, f, what, v_text);
      case ir::CmpOp::Ge:
        return a_.jump(kJgeK, v, t, f, what, v_text);
      case ir::CmpOp::Lt:
        return a_.jump(kJgeK, v, f, t, what, v_text);
      case ir::CmpOp::Le:
        return a_.jump(kJgtK, v, f, t, what, v_text);
    }
  }

  // Jumps to `t` when the condition holds on the argument's kernel width, else to `f`.
  void condition(const std::string& name, const ir::ArgCondition& c, ir::ArgWidth w, Label t,
                 Label f) {
    const uint64_t value = c.value & width_bits(w);
    const uint64_t mask = c.mask & width_bits(w);
    const bool masked = c.op == ir::CmpOp::MaskedEq;
    const std::string what =
        name + " arg" + std::to_string(c.index) + " " + ir::to_string(c.op) + " " +
        value_text(name, c.index, value, masked) +
        (masked ? " mask " + value_text(name, c.index, mask, true) : std::string());
    const std::string arg = name + " arg" + std::to_string(c.index);
    if (c.op == ir::CmpOp::MaskedEq) {
      struct Word {
        bool high;
        uint32_t m, v;
      };
      std::vector<Word> words;
      for (bool high : {true, false}) {
        const uint32_t m = static_cast<uint32_t>(high ? mask >> 32 : mask);
        const uint32_t v = static_cast<uint32_t>(high ? value >> 32 : value);
        if (m != 0) {
          words.push_back({high, m, v});
        } else if (v != 0) {
          return a_.ja(f, what + " (never)");
        }
      }
      if (words.empty()) return a_.ja(t, what + " (always)");
      for (size_t i = 0; i < words.size(); ++i) {
        const Word& wd = words[i];
        load(arg_offset(c.index, wd.high), arg + (wd.high ? " high word" : " low word"));
        if (wd.m != 0xffffffffu)
          and_mask(wd.m, wd.high ? hex(wd.m) : value_text(name, c.index, wd.m, true));
        const Label next = i + 1 == words.size() ? t : local_label();
        a_.jump(kJeqK, wd.v, next, f, what,
                wd.high ? std::string() : value_text(name, c.index, wd.v, true));
        if (next != t) bind(next);
      }
      return;
    }
    const uint32_t lo = static_cast<uint32_t>(value);
    // The low word is named only when it is the whole value.
    const std::string lo_text =
        value >> 32 ? std::string() : value_text(name, c.index, value, false);
    if (w == ir::ArgWidth::U32) {
      load(arg_offset(c.index, false), arg + " low word");
      return word_compare(c.op, lo, t, f, what, lo_text);
    }
    const uint32_t hi = static_cast<uint32_t>(value >> 32);
    const Label low = local_label();
    load(arg_offset(c.index, true), arg + " high word");
    switch (c.op) {
      case ir::CmpOp::Eq:
        a_.jump(kJeqK, hi, low, f);
        break;
      case ir::CmpOp::Ne:
        a_.jump(kJeqK, hi, low, t);
        break;
      case ir::CmpOp::Gt:
      case ir::CmpOp::Ge: {
        const Label eq = local_label();
        a_.jump(kJgtK, hi, t, eq);
        bind(eq);
        a_.jump(kJeqK, hi, low, f);
        break;
      }
      case ir::CmpOp::Lt:
      case ir::CmpOp::Le: {
        const Label eq = local_label();
        a_.jump(kJgtK, hi, f, eq);
        bind(eq);
        a_.jump(kJeqK, hi, low, t);
        break;
      }
      case ir::CmpOp::MaskedEq:
        break;
    }
    bind(low);
    load(arg_offset(c.index, false), arg + " low word");
    word_compare(c.op, lo, t, f, what, lo_text);
  }

  // Control may arrive at a label from several places: what A holds there is unknown
  // unless the caller knows better (see leaf()).
  void bind(Label l) {
    a_.bind(l);
    loaded_.reset();
  }

  // Loads a seccomp_data word into A, unless A already holds it.
  void load(uint32_t offset, const std::string& comment) {
    if (loaded_ == offset) return;
    a_.stmt(kLdAbsW, offset, comment);
    loaded_ = offset;
  }

  void and_mask(uint32_t m, const std::string& m_text) {
    a_.stmt(kAluAndK, m, {}, m_text);
    loaded_.reset();
  }

  const Plan& p_;
  AlphabeticTree tree_;
  Assembler a_;
  std::optional<uint32_t> loaded_;  // the seccomp_data offset A holds, when known
  std::string leaf_name_;           // the syscall whose arguments are being tested
  int local_labels_ = 0;
};

std::vector<Assembler::Line> generate(const ir::SyscallPolicy& policy, const Plan& p) {
  return Generator(p).run(policy);
}

}  // namespace

std::string emit_bpf(const ir::SyscallPolicy& policy) {
  const auto lines = generate(policy, plan(policy));
  static_assert(sizeof(Insn) == 8, "struct sock_filter is 8 bytes");
  std::string out(lines.size() * sizeof(Insn), '\0');
  for (size_t i = 0; i < lines.size(); ++i)
    std::memcpy(out.data() + i * sizeof(Insn), &lines[i].insn, sizeof(Insn));
  return out;
}

std::string emit_listing(const ir::SyscallPolicy& policy) {
  const Plan p = plan(policy);
  const auto lines = generate(policy, p);
  std::string out = "# zpolicy seccomp filter: x86_64 policy, every other ABI answers " +
                    policy.foreign_abi_action.str() + "\n";
  out += "# default " + policy.default_action.str() + ", unknown numbers " +
         policy.unknown_number_action.str() + "\n";
  out += "# " + std::to_string(lines.size()) + " instructions, " +
         std::to_string(p.intervals.size()) + " number intervals\n";
  if (!p.foreign_names.empty()) {
    out += "# rules for names x86_64 does not have (never match):";
    for (const auto& n : p.foreign_names) out += " " + n;
    out += "\n";
  }
  // No instruction numbers: a jump names its target's label, so that instructions an
  // edit does not change keep their lines.
  auto padded = [](std::string s, size_t width) {
    if (s.size() < width) s.resize(width, ' ');
    return s;
  };
  for (const auto& l : lines) {
    const Insn& in = l.insn;
    for (const auto& label : l.labels) out += label + ":\n";
    const char* op = "?";
    switch (in.code) {
      case kLdAbsW:
        op = "ld";
        break;
      case kAluAndK:
        op = "and";
        break;
      case kJa:
        op = "ja";
        break;
      case kJeqK:
        op = "jeq";
        break;
      case kJgtK:
        op = "jgt";
        break;
      case kJgeK:
        op = "jge";
        break;
      case kJsetK:
        op = "jset";
        break;
      case kRetK:
        op = "ret";
        break;
    }
    const std::string k = "#" + (l.k_text.empty() ? hex(in.k) : l.k_text);
    std::string operand;
    if (in.code == kLdAbsW)
      operand = "[" + std::to_string(in.k) + "]";
    else if (in.code == kJa)
      operand = l.jt_text;
    else if ((in.code & 0x07) == 0x05)
      operand = k + ", " + l.jt_text + ", " + l.jf_text;
    else
      operand = k;
    std::string line = "  " + padded(op, 5) + " " + padded(operand, 36);
    if (!l.comment.empty()) line += (line.back() == ' ' ? "; " : " ; ") + l.comment;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace zpolicy::emitters::seccomp
