#include "compiler/review/syscall_words.hpp"

#include <algorithm>
#include <array>
#include <span>

namespace zpolicy::compiler::review {
namespace {

struct Named {
  uint64_t value;
  std::string_view name;
};

// The Linux x86_64 values (uapi headers) of the constants the built-in rules and
// ordinary imported profiles compare with.
constexpr Named kFamilies[] = {{1, "AF_UNIX"},     {2, "AF_INET"},   {10, "AF_INET6"},
                               {16, "AF_NETLINK"}, {17, "AF_PACKET"}, {40, "AF_VSOCK"}};
constexpr Named kSocketTypes[] = {
    {1, "SOCK_STREAM"}, {2, "SOCK_DGRAM"}, {3, "SOCK_RAW"}, {5, "SOCK_SEQPACKET"}};
constexpr Named kIoctls[] = {{0x5412, "TIOCSTI"}, {0x541C, "TIOCLINUX"}};
constexpr Named kCloneFlags[] = {{0x00020000, "CLONE_NEWNS"},   {0x02000000, "CLONE_NEWCGROUP"},
                                 {0x04000000, "CLONE_NEWUTS"},  {0x08000000, "CLONE_NEWIPC"},
                                 {0x10000000, "CLONE_NEWUSER"}, {0x20000000, "CLONE_NEWPID"},
                                 {0x40000000, "CLONE_NEWNET"}};
constexpr Named kModeBits[] = {{04000, "S_ISUID"}, {02000, "S_ISGID"}};

// The calls whose mode argument the built-in rules test, and its index.
struct ModeArg {
  std::string_view call;
  unsigned index;
};
constexpr ModeArg kModeArgs[] = {{"chmod", 1},   {"fchmod", 1}, {"fchmodat", 2}, {"fchmodat2", 2},
                                 {"open", 2},    {"openat", 3}, {"creat", 1},    {"mknod", 1},
                                 {"mknodat", 2}, {"mkdir", 1},  {"mkdirat", 2}};

struct Argument {
  std::string_view name;
  std::span<const Named> constants;
  bool flags = false;  // a bit set: written as NAME|NAME
};

Argument argument(std::string_view call, unsigned index) {
  if (call == "socket" || call == "socketpair") {
    if (index == 0) return {"domain", kFamilies};
    if (index == 1) return {"type", kSocketTypes};
    if (index == 2) return {"protocol", {}};
  }
  if (call == "ioctl" && index == 1) return {"request", kIoctls};
  if (call == "clone" && index == 0) return {"flags", kCloneFlags, true};
  if (call == "sendto" && index == 4) return {"dest_addr", {}};
  for (const auto& m : kModeArgs)
    if (m.call == call && m.index == index) return {"mode", kModeBits, true};
  return {};
}

std::string hex(uint64_t v) {
  static constexpr char digits[] = "0123456789abcdef";
  if (v < 10) return std::to_string(v);
  std::string out;
  for (; v; v >>= 4) out.insert(out.begin(), digits[v & 0xF]);
  return "0x" + out;
}

}  // namespace

std::string argument_name(std::string_view call, unsigned index) {
  const Argument a = argument(call, index);
  return a.name.empty() ? "arg" + std::to_string(index) : std::string(a.name);
}

std::string value_words(std::string_view call, unsigned index, uint64_t value) {
  const Argument a = argument(call, index);
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
  const Argument a = argument(call, index);
  uint64_t out = 0;
  while (true) {
    const auto bar = words.find('|');
    const std::string_view name = words.substr(0, bar);
    const auto c = std::find_if(a.constants.begin(), a.constants.end(),
                                [&](const Named& n) { return n.name == name; });
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
