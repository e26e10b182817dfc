#include "compiler/review/syscall_words.hpp"

#include <algorithm>

#include "ir/syscall_constants.hpp"

namespace zpolicy::compiler::review {
namespace {

std::string hex(uint64_t v) {
  static constexpr char digits[] = "0123456789abcdef";
  if (v < 10) return std::to_string(v);
  std::string out;
  for (; v; v >>= 4) out.insert(out.begin(), digits[v & 0xF]);
  return "0x" + out;
}

}  // namespace

std::string argument_name(std::string_view call, unsigned index) {
  const ir::ArgumentConstants a = ir::argument_constants(call, index);
  return a.name.empty() ? "arg" + std::to_string(index) : std::string(a.name);
}

std::string value_words(std::string_view call, unsigned index, uint64_t value) {
  const ir::ArgumentConstants a = ir::argument_constants(call, index);
  if (!a.flags) {
    for (const auto& c : a.constants)
      if (c.value == value) return std::string(c.name);
    return hex(value);
  }
  std::string out;
  uint64_t rest = value;
  for (const auto& c : a.constants)
    if ((value & c.value) == c.value) {
      out += (out.empty() ? "" : "|") + std::string(c.name);
      rest &= ~c.value;
    }
  if (rest || out.empty()) out += (out.empty() ? "" : "|") + hex(rest);
  return out;
}

std::optional<uint64_t> value_of_words(std::string_view call, unsigned index,
                                       std::string_view words) {
  const ir::ArgumentConstants a = ir::argument_constants(call, index);
  uint64_t out = 0;
  while (true) {
    const auto bar = words.find('|');
    const std::string_view name = words.substr(0, bar);
    const auto c = std::find_if(a.constants.begin(), a.constants.end(),
                                [&](const ir::NamedConstant& n) { return n.name == name; });
    if (c == a.constants.end()) return std::nullopt;
    out |= c->value;
    if (bar == std::string_view::npos) return out;
    if (!a.flags) return std::nullopt;
    words.remove_prefix(bar + 1);
  }
}

std::string condition_words(std::string_view call, const ir::ArgCondition& c) {
  const std::string arg = argument_name(call, c.index);
  const std::string value = value_words(call, c.index, c.value);
  switch (c.op) {
    case ir::CmpOp::Eq:
      return arg + " == " + value;
    case ir::CmpOp::Ne:
      return arg + " != " + value;
    case ir::CmpOp::Lt:
      return arg + " < " + value;
    case ir::CmpOp::Le:
      return arg + " <= " + value;
    case ir::CmpOp::Gt:
      return arg + " > " + value;
    case ir::CmpOp::Ge:
      return arg + " >= " + value;
    case ir::CmpOp::MaskedEq:
      if (c.value == c.mask) return arg + " has " + value_words(call, c.index, c.mask);
      if (c.value == 0) return arg + " lacks " + value_words(call, c.index, c.mask);
      return arg + " & " + value_words(call, c.index, c.mask) + " == " + value;
  }
  return arg;
}

}  // namespace zpolicy::compiler::review
