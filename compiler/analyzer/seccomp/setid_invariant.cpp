#include "compiler/analyzer/seccomp/setid_invariant.hpp"

#include "compiler/analyzer/seccomp/invariant_probes.hpp"

namespace zpolicy::compiler {
namespace {

// Written out here rather than taken from the baseline: the check must not share a
// mistake with what it checks.
constexpr uint64_t kS_ISUID = 04000, kS_ISGID = 02000, kS_IFREG = 0100000, kS_IFCHR = 0020000;
constexpr uint64_t kO_WRONLY = 01, kO_RDWR = 02, kO_CREAT = 0100, kO_EXCL = 0200,
                   kO_TMPFILE = 020200000;
constexpr uint64_t kAT_FDCWD = 0xffffff9c;  // -100 as the low word
constexpr uint64_t kPath = 0x1000;

std::vector<uint64_t> setid_modes() {
  std::vector<uint64_t> out;
  for (uint64_t bits : {kS_ISUID, kS_ISGID, kS_ISUID | kS_ISGID})
    for (uint64_t rest :
         {uint64_t{0}, uint64_t{0755}, uint64_t{01777}, kS_IFREG | 0755, kUpperHalf | 0755})
      out.push_back(bits | rest);
  return out;
}

// Each ABI's probes in turn, so that the findings name x86_64 calls first.
std::vector<InvariantProbe> setid_probes() {
  std::vector<InvariantProbe> out;
  const uint64_t open_flags[] = {kO_WRONLY | kO_CREAT, kO_RDWR | kO_CREAT | kO_EXCL,
                                 kO_RDWR | kO_TMPFILE, kO_WRONLY | kO_CREAT | kUpperHalf,
                                 uint64_t{0}};
  for (ir::Arch a : {ir::Arch::X86_64, ir::Arch::X32, ir::Arch::I386}) {
    auto find = [&](const char* name) { return ir::find_syscall(a, name); };
    const ir::SyscallInfo *chmod = find("chmod"), *fchmod = find("fchmod"),
                          *fchmodat = find("fchmodat"), *fchmodat2 = find("fchmodat2"),
                          *creat = find("creat"), *mknod = find("mknod"),
                          *mknodat = find("mknodat"), *mkdir = find("mkdir"),
                          *mkdirat = find("mkdirat"), *open = find("open"),
                          *openat = find("openat");
    for (uint64_t mode : setid_modes()) {
      out.push_back({a, chmod, {kPath, mode}});
      out.push_back({a, fchmod, {3, mode}});
      out.push_back({a, fchmodat, {kAT_FDCWD, kPath, mode}});
      out.push_back({a, fchmodat2, {kAT_FDCWD, kPath, mode, 0}});
      out.push_back({a, fchmodat2, {3, 0, mode, 0x1000 /* AT_EMPTY_PATH */}});
      out.push_back({a, creat, {kPath, mode}});
      out.push_back({a, mknod, {kPath, mode, 0}});
      out.push_back({a, mknod, {kPath, kS_IFCHR | mode, 0x0103}});
      out.push_back({a, mknodat, {kAT_FDCWD, kPath, mode, 0}});
      out.push_back({a, mkdir, {kPath, mode}});
      out.push_back({a, mkdirat, {kAT_FDCWD, kPath, mode}});
      for (uint64_t flags : open_flags) {
        out.push_back({a, open, {kPath, flags, mode}});
        out.push_back({a, openat, {kAT_FDCWD, kPath, flags, mode}});
      }
    }
    out.push_back({a, find("openat2"), {kAT_FDCWD, kPath, 0x2000, 24}});
  }
  return out;
}

}  // namespace

std::vector<ir::Diagnostic> check_setid_invariant(std::span<const BpfInsn> program) {
  // The same 948 probes for every program, made once.
  static const std::vector<InvariantProbe> kProbes = setid_probes();
  return first_let_through(program, kProbes,
                           {{ir::kBuiltinFile, 0, 0},
                            "refused: no call sets S_ISUID or S_ISGID (a root run would leave a "
                            "setuid file on the host)"});
}

}  // namespace zpolicy::compiler
