#include "compiler/analyzer/seccomp/shared_access_invariant.hpp"

#include "compiler/analyzer/seccomp/invariant_probes.hpp"

namespace zpolicy::compiler {
namespace {

// Written out here rather than taken from the baseline: the check must not share a
// mistake with what it checks.
constexpr uint64_t kS_IWOTH = 02, kS_ISVTX = 01000, kS_IFDIR = 0040000;
constexpr uint64_t kAtCwd = 0xffffff9c;  // -100 as the low word
constexpr uint64_t kPathAddress = 0x1000, kName = 0x2000, kValue = 0x3000;

std::vector<InvariantProbe> shared_access_probes() {
  std::vector<InvariantProbe> out;
  const uint64_t modes[] = {kS_IWOTH,         0777, 0757, 0666, kS_ISVTX | 0777, kS_IFDIR | 0757,
                            kUpperHalf | 0002};
  for (ir::Arch a : {ir::Arch::X86_64, ir::Arch::X32, ir::Arch::I386}) {
    auto find = [&](const char* name) { return ir::find_syscall(a, name); };
    for (uint64_t mode : modes) {
      out.push_back({a, find("chmod"), {kPathAddress, mode}});
      out.push_back({a, find("fchmod"), {3, mode}});
      out.push_back({a, find("fchmodat"), {kAtCwd, kPathAddress, mode}});
      out.push_back({a, find("fchmodat2"), {kAtCwd, kPathAddress, mode, 0}});
      out.push_back({a, find("fchmodat2"), {3, 0, mode, 0x1000 /* AT_EMPTY_PATH */}});
    }
    for (const char* set : {"setxattr", "lsetxattr"})
      out.push_back({a, find(set), {kPathAddress, kName, kValue, 44, 0}});
    out.push_back({a, find("fsetxattr"), {3, kName, kValue, 44, 0}});
    out.push_back({a, find("setxattrat"), {kAtCwd, kPathAddress, 0, kName, kValue, 32}});
    for (const char* remove : {"removexattr", "lremovexattr"})
      out.push_back({a, find(remove), {kPathAddress, kName}});
    out.push_back({a, find("fremovexattr"), {3, kName}});
    out.push_back({a, find("removexattrat"), {kAtCwd, kPathAddress, 0, kName}});
  }
  return out;
}

}  // namespace

std::vector<ir::Diagnostic> check_shared_access_invariant(std::span<const BpfInsn> program) {
  static const std::vector<InvariantProbe> kProbes = shared_access_probes();
  return first_let_through(program, kProbes,
                           {{ir::kBuiltinFile, 0, 0},
                            "refused: no call gives other local users write access (a mode "
                            "with S_IWOTH, an extended attribute such as an ACL)"});
}

}  // namespace zpolicy::compiler
