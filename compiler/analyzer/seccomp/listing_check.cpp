#include "compiler/analyzer/seccomp/listing_check.hpp"

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/number_reach.hpp"
#include "ir/syscall_constants.hpp"
#include "ir/syscall_table.hpp"
#include "ir/target.hpp"

namespace zpolicy::compiler {
namespace {

using namespace bpf;

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

bool starts_with_word(std::string_view s, std::string_view word) {
  return s.starts_with(word) && (s.size() == word.size() || s[word.size()] == ' ');
}

// The field a load of offset `k` of struct seccomp_data reads.
std::string listing_field_name(uint32_t k) {
  if (k == 0) return "nr";
  if (k == 4) return "arch";
  if (k < 16) return k == 8 ? "ip low word" : "ip high word";
  return "arg" + std::to_string((k - 16) / 8) + ((k - 16) % 8 ? " high word" : " low word");
}

// The number a `0xHEX` text (`0x` and at least one hexadecimal digit, nothing after) says.
std::optional<uint32_t> hex_number(std::string_view text) {
  uint32_t v = 0;
  if (!text.starts_with("0x")) return std::nullopt;
  const auto r = std::from_chars(text.data() + 2, text.data() + text.size(), v, 16);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

// What an `nr >= BOUND` comment on `in` must say: BOUND is the comparison's constant,
// as NAME(NUMBER) of a syscall or as 0xNUMBER (a number no syscall has).
std::optional<std::string> bound_error(const BpfInsn& in, std::string_view bound) {
  const std::string wrong = "the comment's bound is not the comparison's constant";
  if (bound.starts_with("0x")) {
    const auto number = hex_number(bound);
    if (!number || in.code != (JMP | JGE | K) || *number != in.k) return wrong;
    return std::nullopt;
  }
  const size_t open = bound.find('(');
  const size_t close = bound.find(')');
  unsigned number = 0;
  if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
      std::from_chars(bound.data() + open + 1, bound.data() + close, number).ptr !=
          bound.data() + close)
    return "an `nr >=` comment is NAME(NUMBER) or 0xNUMBER";
  const ir::SyscallInfo* s = ir::find_syscall(ir::Arch::X86_64, number);
  if (in.code != (JMP | JGE | K) || number != in.k || !s || s->name != bound.substr(0, open))
    return wrong;
  return std::nullopt;
}

// Whether a word of `text` (split at anything but letters, digits and `_`) names a
// system call number: an x86_64 syscall's name, or a decimal or 0x number.
bool names_a_number(std::string_view text) {
  auto word_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  for (size_t i = 0; i < text.size();) {
    size_t end = i;
    while (end < text.size() && word_char(text[end])) ++end;
    const std::string_view word = text.substr(i, end - i);
    const bool digits = !word.empty() && word.find_first_not_of("0123456789") == std::string_view::npos;
    if (digits || (word.starts_with("0x") && word.size() > 2) ||
        (!word.empty() && ir::find_syscall(ir::Arch::X86_64, word)))
      return true;
    i = end + 1;
  }
  return false;
}

// One end of a range of numbers: NAME or NAME(N) of an x86_64 syscall, or 0xHEX.
std::optional<uint32_t> range_end(std::string_view text) {
  if (text.starts_with("0x")) return hex_number(text);
  const size_t open = text.find('(');
  if (open == std::string_view::npos) {
    const ir::SyscallInfo* s = ir::find_syscall(ir::Arch::X86_64, text);
    return s ? std::optional(s->nr) : std::nullopt;
  }
  // NAME(N): syscall N must be NAME (names are unique, so looking up N is looking up NAME).
  unsigned n = 0;
  const auto r = std::from_chars(text.data() + open + 1, text.data() + text.size(), n);
  if (r.ec != std::errc() || r.ptr + 1 != text.data() + text.size() || *r.ptr != ')')
    return std::nullopt;
  const ir::SyscallInfo* s = ir::find_syscall(ir::Arch::X86_64, n);
  if (!s || s->name != text.substr(0, open)) return std::nullopt;
  return n;
}

std::string number_text(uint32_t nr) {
  if (const auto* s = ir::find_syscall(ir::Arch::X86_64, nr))
    return std::string(s->name) + "(" + std::to_string(nr) + ")";
  return hex_text(nr);
}

// Why `text`, a label or comment, does not name exactly the numbers that reach its
// instruction, if it names numbers at all (names_a_number): it must be one range, FROM..TO
// or one end alone.
std::optional<std::string> range_error(std::string_view text, const NumberReach& reach) {
  const size_t dots = text.find("..");
  const auto lo = range_end(text.substr(0, dots));
  const auto hi = dots == std::string_view::npos ? lo : range_end(text.substr(dots + 2));
  const bool range = lo && hi && *lo <= *hi;
  // A range names a number (its first word is a syscall or a 0x number), so only text
  // that is not one needs looking at word by word.
  if (!range && !names_a_number(text)) return std::nullopt;
  // Built only for the message: most labels and comments are right.
  auto quoted = [&] { return "'" + std::string(text) + "'"; };
  if (!reach.exact)
    return quoted() + " names system call numbers, but the program does more than compare the "
                    "number with constants before this instruction";
  if (!range)
    return quoted() + " names system call numbers but is not a range (NAME, NAME(N) or 0xN, or "
                    "FROM..TO of them)";
  if (reach.intervals.size() == 1 && reach.intervals[0] == std::pair{*lo, *hi})
    return std::nullopt;
  std::string actual;
  for (const auto& [a, b] : reach.intervals) {
    if (actual.size() > 200) {
      actual += ", ...";
      break;
    }
    actual += (actual.empty() ? "" : ", ") + number_text(a) + (a == b ? "" : ".." + number_text(b));
  }
  return quoted() + " names the numbers " + number_text(*lo) +
         (*lo == *hi ? "" : ".." + number_text(*hi)) + ", but " +
         (actual.empty() ? std::string("none") : actual) + " reach this instruction";
}

// What a comment on `in`, reached by the numbers `reach`, must say, if it says anything
// of that kind. A syscall or number it names (a return's after its action, a load's or a
// jump's before the rest: "open arg2 low word") is the numbers that reach it.
std::optional<std::string> comment_error(const BpfInsn& in, std::string_view comment,
                                         const NumberReach& reach) {
  std::string_view subject;
  if (in.code == (RET | K)) {
    const std::string name = seccomp_ret_name(in.k);
    if (!starts_with_word(comment, name))
      return "the return's comment must begin with its action, " + name;
    subject = comment.substr(name.size());
    while (subject.starts_with(' ') || subject.starts_with('#')) subject.remove_prefix(1);
  } else if (in.code == (LD | W | ABS)) {
    const std::string field = listing_field_name(in.k);
    const bool named = in.k < 8 ? comment == field : comment.ends_with(field);
    if (!named) return "the load's comment must name its field, " + field;
    subject = trim_right(comment.substr(0, comment.size() - field.size()));
  } else if (cls(in.code) == JMP && comment.starts_with("nr >= ")) {
    return bound_error(in, comment.substr(6));
  } else if (cls(in.code) == JMP) {
    subject = comment.substr(0, comment.find(' '));
  }
  return range_error(subject, reach);
}

// A label's own name, without the `.N` that tells the places of one range apart
// ("open.2" is a place the numbers of "open" reach).
std::string_view label_base(std::string_view label) {
  const size_t dot = label.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == label.size() ||
      label.find_first_not_of("0123456789", dot + 1) != std::string_view::npos)
    return label;
  return label.substr(0, dot);
}

// A constant as the listing may write it: a number (hexadecimal or decimal), an argument
// constant's or a syscall's name, or several joined by `|`; nullopt for anything else.
std::optional<uint32_t> listing_constant(std::string_view text) {
  uint64_t value = 0;
  while (true) {
    const size_t bar = text.find('|');
    const std::string_view part = text.substr(0, bar);
    uint64_t v = 0;
    const bool hex = part.starts_with("0x");
    const std::string_view digits = hex ? part.substr(2) : part;
    const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v, hex ? 16 : 10);
    if (digits.empty() || r.ec != std::errc() || r.ptr != digits.data() + digits.size()) {
      if (auto named = ir::constant_value(part))
        v = *named;
      else if (const auto* s = ir::find_syscall(ir::Arch::X86_64, part))
        v = s->nr;
      else
        return std::nullopt;
    }
    value |= v;
    if (bar == std::string_view::npos) break;
    text.remove_prefix(bar + 1);
  }
  if (value > 0xffffffffu) return std::nullopt;
  return static_cast<uint32_t>(value);
}

bool is_number(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789abcdefx") == std::string_view::npos &&
         (text.starts_with("0x") || text.find_first_not_of("0123456789") == std::string_view::npos);
}

// A line that defines a label: NAME followed by `:`, flush left.
std::optional<std::string_view> label_of(std::string_view line) {
  if (line.empty() || line.front() == ' ' || !line.ends_with(':')) return std::nullopt;
  return line.substr(0, line.size() - 1);
}

bool valid_label(std::string_view name) {
  return !name.empty() && name != "next" && name.find_first_of(" ,;#:") == std::string_view::npos;
}

// A listing that is not the program's, at its 1-based line of seccomp.txt.
ir::Diagnostic listing_mismatch(int line, std::string why) {
  return ir::error_at({"seccomp.txt", line, 1}, std::move(why));
}

using Labels = std::unordered_map<std::string_view, size_t>;

// The instruction a jump to `name` from instruction `i` reaches; none for a label that
// is not defined.
std::optional<size_t> jump_target(std::string_view name, size_t i, const Labels& labels) {
  if (name == "next") return i + 1;
  const auto at = labels.find(name);
  if (at == labels.end()) return std::nullopt;
  return at->second;
}

// A `#K` operand in the analyzer's own rendering: a number as written, a named constant
// as its hexadecimal value.
std::optional<std::string> k_text(std::string_view k) {
  if (!k.starts_with('#')) return std::nullopt;
  k.remove_prefix(1);
  if (is_number(k)) return "#" + std::string(k);
  const auto v = listing_constant(k);
  if (!v) return std::nullopt;
  return "#" + hex_text(*v);
}

// The listing's instruction column (`jeq   #AF_UNIX, socketpair.2, next`), at `line`, in
// the analyzer's own rendering (`jeq   #0x1, 31, 32`), or why it has none.
ir::Result<std::string> numeric_text(std::string_view text, size_t i, int line,
                                     const Labels& labels) {
  text = trim_right(text);
  const size_t space = text.find(' ');
  const std::string_view op = text.substr(0, space);
  std::string_view operand =
      space == std::string_view::npos ? std::string_view() : text.substr(space);
  while (operand.starts_with(' ')) operand.remove_prefix(1);
  auto no_label = [&](std::string_view name) {
    return listing_mismatch(line,
                            "no label " + std::string(name) + " precedes a later instruction");
  };
  // The mnemonic left-aligned in five columns, then a space, as instruction_text writes it.
  std::string out(op);
  out.resize(std::max<size_t>(out.size(), 5), ' ');
  out += ' ';
  const bool conditional = op == "jeq" || op == "jgt" || op == "jge" || op == "jset";
  if (op == "ja") {
    const auto t = jump_target(operand, i, labels);
    if (!t) return no_label(operand);
    return out + std::to_string(*t);
  }
  if (conditional && operand.starts_with('#')) {
    const size_t c1 = operand.find(", ");
    const size_t c2 = c1 == std::string_view::npos ? c1 : operand.find(", ", c1 + 2);
    if (c2 == std::string_view::npos)
      return listing_mismatch(line,
                              "a conditional jump is `" + std::string(op) + " #K, TRUE, FALSE`");
    const auto k = k_text(operand.substr(0, c1));
    if (!k) return listing_mismatch(line, "unknown constant " + std::string(operand.substr(0, c1)));
    const auto jt = jump_target(operand.substr(c1 + 2, c2 - c1 - 2), i, labels);
    if (!jt) return no_label(operand.substr(c1 + 2, c2 - c1 - 2));
    const auto jf = jump_target(operand.substr(c2 + 2), i, labels);
    if (!jf) return no_label(operand.substr(c2 + 2));
    out += *k;
    out += ", ";
    out += std::to_string(*jt);
    out += ", ";
    out += std::to_string(*jf);
    return out;
  }
  if (operand.starts_with('#')) {
    const auto k = k_text(operand);
    if (!k) return listing_mismatch(line, "unknown constant " + std::string(operand));
    return out + *k;
  }
  return std::string(trim_right(out + std::string(operand)));
}

// The index of the first line after the header: three lines that state the policy's
// actions and the program's length, then any number of further `# ` lines (names the
// policy has that x86_64 lacks).
ir::Result<size_t> read_header(const std::vector<std::string_view>& lines,
                               std::span<const BpfInsn> prog, const ir::SyscallPolicy& policy) {
  const std::string header[] = {
      "# zpolicy seccomp filter: x86_64 policy, every other ABI answers " +
          policy.foreign_abi_action.str(),
      "# default " + policy.default_action.str() + ", unknown numbers " +
          policy.unknown_number_action.str(),
      "# " + std::to_string(prog.size()) + " instructions, "};
  size_t at = 0;
  for (size_t h = 0; h < 3; ++h, ++at) {
    const bool ok =
        at < lines.size() && (h < 2 ? lines[at] == header[h] : lines[at].starts_with(header[h]));
    if (!ok)
      return listing_mismatch(static_cast<int>(at + 1), "expected the header line \"" + header[h] +
                                                            (h == 2 ? "…" : "") + "\"");
  }
  while (at < lines.size() && lines[at].starts_with("# ")) ++at;
  return at;
}

// The labels defined from line index `at` on, each with the instruction it precedes.
ir::Result<Labels> read_labels(const std::vector<std::string_view>& lines, size_t at) {
  Labels labels;
  for (size_t i = 0; at < lines.size(); ++at) {
    const auto name = label_of(lines[at]);
    if (!name) {
      ++i;
      continue;
    }
    const int line = static_cast<int>(at + 1);
    if (!valid_label(*name))
      return listing_mismatch(line,
                              "a label is a name without space, comma, colon, semicolon or "
                              "#, and not `next`");
    if (!labels.emplace(*name, i).second)
      return listing_mismatch(line, "label " + std::string(*name) + " is defined twice");
  }
  return labels;
}

// Whether `text`, the listing's line `line` without its indent, lists instruction `i`
// of `prog` and says nothing false of it.
std::optional<ir::Diagnostic> check_instruction(std::string_view text, int line,
                                                std::span<const BpfInsn> prog, size_t i,
                                                const Labels& labels, const NumberReach& reach) {
  std::string_view comment;
  if (const size_t semi = text.find("; "); semi != std::string_view::npos) {
    comment = text.substr(semi + 2);
    text = text.substr(0, semi);
  }
  const auto numeric = numeric_text(text, i, line, labels);
  if (!numeric) return numeric.error();
  const std::string expected = instruction_text(prog, i);
  if (*numeric != expected)
    return listing_mismatch(
        line, "instruction " + std::to_string(i) + " is `" + expected + "` in seccomp.bpf");
  if (auto why = comment_error(prog[i], comment, reach)) return listing_mismatch(line, *why);
  return std::nullopt;
}

}  // namespace

std::optional<ir::Diagnostic> check_listing(std::string_view listing, std::span<const BpfInsn> prog,
                                            const ir::SyscallPolicy& policy) {
  const auto lines = ir::artifact_lines(listing);
  if (!listing.empty() && listing.back() != '\n')
    return listing_mismatch(static_cast<int>(lines.size()), "the last line has no newline");
  const auto body = read_header(lines, prog, policy);
  if (!body) return body.error();
  // Labels first: a jump names a label further down.
  const auto labels = read_labels(lines, *body);
  if (!labels) return labels.error();
  const auto reach = number_reach(prog);
  size_t at = *body;
  for (size_t i = 0; i < prog.size(); ++i, ++at) {
    for (; at < lines.size() && label_of(lines[at]); ++at) {
      const std::string_view base = label_base(*label_of(lines[at]));
      if (auto why = range_error(base, reach[i]))
        return listing_mismatch(static_cast<int>(at + 1), "label " + *why);
    }
    const int line = static_cast<int>(at + 1);
    if (at >= lines.size())
      return listing_mismatch(line, "instruction " + std::to_string(i) +
                                        " is missing; the program has " +
                                        std::to_string(prog.size()));
    const std::string_view text = lines[at];
    if (!text.starts_with("  ") || text.starts_with("   "))
      return listing_mismatch(
          line, "expected instruction " + std::to_string(i) + ", indented by two spaces");
    if (auto wrong = check_instruction(text.substr(2), line, prog, i, *labels, reach[i]))
      return wrong;
  }
  if (at != lines.size())
    return listing_mismatch(static_cast<int>(at + 1), "text after the last instruction");
  return std::nullopt;
}

std::optional<ListingLine> listing_line(std::string_view listing, size_t index) {
  const auto lines = ir::artifact_lines(listing);
  size_t at = 0;
  while (at < lines.size() && lines[at].starts_with('#')) ++at;
  for (size_t i = 0; at < lines.size(); ++at) {
    if (label_of(lines[at])) continue;
    if (i++ != index) continue;
    std::string_view text = lines[at];
    while (text.starts_with(' ')) text.remove_prefix(1);
    return ListingLine{static_cast<int>(at + 1), text};
  }
  return std::nullopt;
}

}  // namespace zpolicy::compiler
