#include "compiler/analyzer/seccomp/setid_invariant.hpp"

#include <array>
#include <cstdio>
#include <set>
#include <utility>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"

namespace zpolicy::compiler {
namespace {

// Written out here rather than taken from the baseline: the check must not share a
// mistake with what it checks.
constexpr uint64_t kS_ISUID = 04000, kS_ISGID = 02000, kS_IFREG = 0100000, kS_IFCHR = 0020000;
constexpr uint64_t kO_WRONLY = 01, kO_RDWR = 02, kO_CREAT = 0100, kO_EXCL = 0200,
                   kO_TMPFILE = 020200000;
constexpr uint64_t kHigh = 0xffffffff00000000u;
constexpr uint64_t kAT_FDCWD = 0xffffff9c;  // -100 as the low word
constexpr uint64_t kPath = 0x1000;

struct Probe {
  const char* name;
  std::array<uint64_t, 6> args;
};

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

std::vector<uint64_t> setid_modes() {
  std::vector<uint64_t> out;
  for (uint64_t bits : {kS_ISUID, kS_ISGID, kS_ISUID | kS_ISGID})
    for (uint64_t rest :
         {uint64_t{0}, uint64_t{0755}, uint64_t{01777}, kS_IFREG | 0755, kHigh | 0755})
      out.push_back(bits | rest);
  return out;
}

std::vector<Probe> probes() {
  std::vector<Probe> out;
  const uint64_t open_flags[] = {kO_WRONLY | kO_CREAT, kO_RDWR | kO_CREAT | kO_EXCL,
                                 kO_RDWR | kO_TMPFILE, kO_WRONLY | kO_CREAT | kHigh, uint64_t{0}};
  for (uint64_t mode : setid_modes()) {
    out.push_back({"chmod", {kPath, mode}});
    out.push_back({"fchmod", {3, mode}});
    out.push_back({"fchmodat", {kAT_FDCWD, kPath, mode}});
    out.push_back({"fchmodat2", {kAT_FDCWD, kPath, mode, 0}});
    out.push_back({"fchmodat2", {3, 0, mode, 0x1000 /* AT_EMPTY_PATH */}});
    out.push_back({"creat", {kPath, mode}});
    out.push_back({"mknod", {kPath, mode, 0}});
    out.push_back({"mknod", {kPath, kS_IFCHR | mode, 0x0103}});
    out.push_back({"mknodat", {kAT_FDCWD, kPath, mode, 0}});
    out.push_back({"mkdir", {kPath, mode}});
    out.push_back({"mkdirat", {kAT_FDCWD, kPath, mode}});
    for (uint64_t flags : open_flags) {
      out.push_back({"open", {kPath, flags, mode}});
      out.push_back({"openat", {kAT_FDCWD, kPath, flags, mode}});
    }
  }
  out.push_back({"openat2", {kAT_FDCWD, kPath, 0x2000, 24}});
  return out;
}

}  // namespace

std::vector<Finding> check_setid_invariant(std::string_view bpf) {
  std::vector<Finding> out;
  std::string error;
  const auto program = parse_bpf(bpf, &error);
  if (!program) return out;  // the IR verifier reports the malformed program
  // The first failing probe of each call on each ABI: the rest say the same.
  std::set<std::pair<ir::Arch, std::string_view>> reported;
  for (ir::Arch arch : {ir::Arch::X86_64, ir::Arch::X32, ir::Arch::I386})
    for (const Probe& p : probes()) {
      const ir::SyscallInfo* info = ir::find_syscall(arch, p.name);
      if (!info) continue;  // the ABI has no such call
      if (reported.contains({arch, p.name})) continue;
      std::vector<uint32_t> trace;
      const BpfRun run =
          run_bpf(*program, SeccompData{info->nr, ir::audit_arch(arch), 0, p.args}, &trace);
      const auto action = decode_seccomp_ret(run.ret);
      if (action && action->kind != ir::Action::Kind::Allow) continue;
      std::string text = std::string(ir::to_string(arch)) + " " + p.name + "(";
      for (size_t i = 0; i < p.args.size(); ++i) text += (i ? ", " : "") + hex(p.args[i]);
      Finding f{"linux",
                "dropped-deny",
                {ir::kBuiltinFile, 0, 0},
                text + ")",
                "refused: no call sets S_ISUID or S_ISGID (a root run would leave a "
                "setuid file on the host)",
                seccomp_action_text(run.ret),
                {}};
      std::string path = "seccomp.bpf path";
      for (uint32_t pc : trace) path += " " + std::to_string(pc);
      f.trace.push_back(std::move(path));
      out.push_back(std::move(f));
      reported.insert({arch, p.name});
    }
  return out;
}

}  // namespace zpolicy::compiler
