#include "ir/syscall_constants.hpp"

#include "ir/syscall_table.hpp"

namespace zpolicy::ir {
namespace {

constexpr NamedConstant kFamilies[] = {{1, "AF_UNIX"},     {2, "AF_INET"},    {10, "AF_INET6"},
                                       {16, "AF_NETLINK"}, {17, "AF_PACKET"}, {40, "AF_VSOCK"}};
constexpr NamedConstant kSocketTypes[] = {
    {1, "SOCK_STREAM"}, {2, "SOCK_DGRAM"}, {3, "SOCK_RAW"}, {5, "SOCK_SEQPACKET"}};
constexpr NamedConstant kIoctls[] = {
    {0x5412, "TIOCSTI"}, {0x541C, "TIOCLINUX"}, {0x5452, "FIOASYNC"}};
constexpr NamedConstant kFcntls[] = {
    {4, "F_SETFL"}, {10, "F_SETSIG"}, {1024, "F_SETLEASE"}, {1024 + 16, "F_SETDELEG"}};
constexpr NamedConstant kFileStatusFlags[] = {{020000, "O_ASYNC"}};
constexpr NamedConstant kCloneFlags[] = {
    {0x00020000, "CLONE_NEWNS"},  {0x02000000, "CLONE_NEWCGROUP"}, {0x04000000, "CLONE_NEWUTS"},
    {0x08000000, "CLONE_NEWIPC"}, {0x10000000, "CLONE_NEWUSER"},   {0x20000000, "CLONE_NEWPID"},
    {0x40000000, "CLONE_NEWNET"}};
constexpr NamedConstant kModeBits[] = {{04000, "S_ISUID"}, {02000, "S_ISGID"}};
constexpr NamedConstant kArches[] = {{kAuditArchX86_64, "AUDIT_ARCH_X86_64"},
                                     {kAuditArchI386, "AUDIT_ARCH_I386"}};

// The calls whose mode argument the built-in rules test, and its index.
struct ModeArg {
  std::string_view call;
  unsigned index;
};
constexpr ModeArg kModeArgs[] = {{"chmod", 1},   {"fchmod", 1}, {"fchmodat", 2}, {"fchmodat2", 2},
                                 {"open", 2},    {"openat", 3}, {"creat", 1},    {"mknod", 1},
                                 {"mknodat", 2}, {"mkdir", 1},  {"mkdirat", 2}};

std::string hex(uint64_t v) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (; v; v >>= 4) out.insert(out.begin(), digits[v & 0xF]);
  return "0x" + out;
}

}  // namespace

ArgumentConstants argument_constants(std::string_view call, unsigned index) {
  if (call == "socket" || call == "socketpair") {
    if (index == 0) return {"domain", kFamilies};
    if (index == 1) return {"type", kSocketTypes};
    if (index == 2) return {"protocol", {}};
  }
  if (call == "ioctl" && index == 1) return {"request", kIoctls};
  if (call == "fcntl" && index == 1) return {"cmd", kFcntls};
  if (call == "fcntl" && index == 2) return {"arg", kFileStatusFlags, true};
  if (call == "clone" && index == 0) return {"flags", kCloneFlags, true};
  if (call == "sendto" && index == 4) return {"dest_addr", {}};
  for (const auto& m : kModeArgs)
    if (m.call == call && m.index == index) return {"mode", kModeBits, true};
  return {};
}

std::optional<std::string> constant_words(std::string_view call, unsigned index, uint64_t value) {
  const ArgumentConstants a = argument_constants(call, index);
  if (!a.flags) {
    for (const auto& c : a.constants)
      if (c.value == value) return std::string(c.name);
    return std::nullopt;
  }
  std::string out;
  uint64_t rest = value;
  for (const auto& c : a.constants) {
    if ((rest & c.value) != c.value) continue;
    out += (out.empty() ? "" : "|") + std::string(c.name);
    rest &= ~c.value;
  }
  if (out.empty()) return std::nullopt;
  if (rest != 0) out += "|" + hex(rest);
  return out;
}

std::optional<uint64_t> constant_value(std::string_view name) {
  using Group = std::span<const NamedConstant>;
  for (const Group group :
       {Group(kFamilies), Group(kSocketTypes), Group(kIoctls), Group(kFcntls),
        Group(kFileStatusFlags), Group(kCloneFlags), Group(kModeBits), Group(kArches)})
    for (const auto& c : group)
      if (c.name == name) return c.value;
  return std::nullopt;
}

}  // namespace zpolicy::ir
