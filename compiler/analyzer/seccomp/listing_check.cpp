#include "compiler/analyzer/seccomp/listing_check.hpp"

#include <charconv>
#include <cstdio>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::compiler {
namespace {

using namespace bpf;

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      out.push_back(text);  // no final newline: reported as such below
      break;
    }
    out.push_back(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  return out;
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

bool starts_with_word(std::string_view s, std::string_view word) {
  return s.starts_with(word) && (s.size() == word.size() || s[word.size()] == ' ');
}

// What a comment on instruction i must say, if it says anything of that kind.
std::optional<std::string> comment_error(std::span<const BpfInsn> prog, size_t i,
                                         std::string_view comment) {
  const BpfInsn& in = prog[i];
  if (in.code == (RET | K)) {
    const std::string name = seccomp_ret_name(in.k);
    if (!starts_with_word(comment, name))
      return "the return's comment must begin with its action, " + name;
    return std::nullopt;
  }
  if (in.code == (LD | W | ABS)) {
    std::string field;
    if (in.k == 0)
      field = "nr";
    else if (in.k == 4)
      field = "arch";
    else if (in.k < 16)
      field = in.k == 8 ? "ip low word" : "ip high word";
    else
      field =
          "arg" + std::to_string((in.k - 16) / 8) + ((in.k - 16) % 8 ? " high word" : " low word");
    const bool named = in.k < 8 ? comment == field : comment.ends_with(field);
    if (!named) return "the load's comment must name its field, " + field;
    return std::nullopt;
  }
  if (cls(in.code) == JMP && comment.starts_with("nr >= ")) {
    const std::string_view bound = comment.substr(6);
    if (bound.starts_with("0x")) {  // a number no syscall has
      uint32_t number = 0;
      const auto r = std::from_chars(bound.data() + 2, bound.data() + bound.size(), number, 16);
      if (r.ec != std::errc() || r.ptr != bound.data() + bound.size() ||
          in.code != (JMP | JGE | K) || number != in.k)
        return "the comment's bound is not the comparison's constant";
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
      return "the comment's bound is not the comparison's constant";
  }
  return std::nullopt;
}

}  // namespace

std::optional<ListingMismatch> check_listing(std::string_view listing,
                                             std::span<const BpfInsn> prog,
                                             const ir::SyscallPolicy& policy) {
  if (!listing.empty() && listing.back() != '\n')
    return ListingMismatch{static_cast<int>(lines_of(listing).size()),
                           "the last line has no newline"};
  const auto lines = lines_of(listing);
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
      return ListingMismatch{static_cast<int>(at + 1), "expected the header line \"" + header[h] +
                                                           (h == 2 ? "…" : "") + "\""};
  }
  // Optional further header lines (names the policy has that x86_64 lacks).
  while (at < lines.size() && lines[at].starts_with("# ")) ++at;
  for (size_t i = 0; i < prog.size(); ++i, ++at) {
    const int line = static_cast<int>(at + 1);
    if (at >= lines.size())
      return ListingMismatch{line, "instruction " + std::to_string(i) +
                                       " is missing; the program has " +
                                       std::to_string(prog.size())};
    char index[32];
    std::snprintf(index, sizeof index, "%04zu  ", i);
    std::string_view text = lines[at];
    if (!text.starts_with(index))
      return ListingMismatch{line, "expected instruction " + std::to_string(i)};
    text.remove_prefix(std::string_view(index).size());
    std::string_view comment;
    if (const size_t semi = text.find("; "); semi != std::string_view::npos) {
      comment = text.substr(semi + 2);
      text = text.substr(0, semi);
    }
    const std::string expected = instruction_text(prog, i);
    if (trim_right(text) != expected)
      return ListingMismatch{
          line, "instruction " + std::to_string(i) + " is `" + expected + "` in seccomp.bpf"};
    if (auto why = comment_error(prog, i, comment)) return ListingMismatch{line, *why};
  }
  if (at != lines.size())
    return ListingMismatch{static_cast<int>(at + 1), "text after the last instruction"};
  return std::nullopt;
}

}  // namespace zpolicy::compiler
