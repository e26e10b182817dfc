#include "compiler/analyzer/seccomp/network_invariant.hpp"

#include <cstdio>
#include <set>
#include <utility>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"

namespace zpolicy::compiler {
namespace {

constexpr uint64_t kAF_UNIX = 1, kAF_INET = 2, kAF_INET6 = 10, kAF_NETLINK = 16,
                   kAF_PACKET = 17, kAF_VSOCK = 40;
constexpr uint64_t kSTREAM = 1, kDGRAM = 2, kRAW = 3, kRDM = 4, kSEQPACKET = 5;
constexpr uint64_t kNONBLOCK = 04000, kCLOEXEC = 02000000;
constexpr uint64_t kHigh = uint64_t{1} << 32;
constexpr uint32_t kI386Socketcall = 102;

struct Probe {
  ir::Arch arch;
  const char* name;
  std::array<uint64_t, 6> args;
};

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

std::vector<Probe> probes(ir::Network network) {
  std::vector<Probe> out;
  auto on_every_abi = [&](const char* name, std::array<uint64_t, 6> args) {
    for (ir::Arch arch : {ir::Arch::X86_64, ir::Arch::X32, ir::Arch::I386})
      out.push_back({arch, name, args});
  };
  std::vector<uint64_t> families = {kAF_UNIX, kAF_UNIX | kHigh, kAF_NETLINK, kAF_PACKET,
                                    kAF_VSOCK};
  if (network == ir::Network::None) families.insert(families.end(), {kAF_INET, kAF_INET6});
  for (uint64_t family : families)
    for (uint64_t type : {kSTREAM, kDGRAM, kSEQPACKET, kRAW})
      on_every_abi("socket", {family, type, 0, 0, 0, 0});
  const uint64_t connected[] = {kSTREAM, kSEQPACKET};
  for (uint64_t family : {kAF_INET, kAF_INET6, kAF_NETLINK, uint64_t{0}})
    for (uint64_t type : connected) on_every_abi("socketpair", {family, type, 0, 0, 0, 0});
  for (uint64_t type : {kDGRAM, kRAW, kRDM, uint64_t{0}, uint64_t{6}, uint64_t{9},
                        uint64_t{13}, kDGRAM | kNONBLOCK, kDGRAM | kCLOEXEC,
                        kDGRAM | kNONBLOCK | kCLOEXEC, kDGRAM | kHigh, kRAW | kCLOEXEC})
    on_every_abi("socketpair", {kAF_UNIX, type, 0, 0, 0, 0});
  for (const char* name : {"io_uring_setup", "io_uring_enter", "io_uring_register"})
    on_every_abi(name, {});
  if (network == ir::Network::None) {
    on_every_abi("connect", {3, 0x1000, 110, 0, 0, 0});
    on_every_abi("sendto", {3, 0x1000, 1, 0, 0x2000, 110});
  }
  return out;
}

}  // namespace

std::vector<Finding> check_network_invariant(const ir::Resolved& resolved, std::string_view bpf) {
  std::vector<Finding> out;
  if (resolved.network == ir::Network::Full) return out;
  std::string error;
  const auto program = parse_bpf(bpf, &error);
  if (!program) return out;  // the IR verifier reports the malformed program
  auto refused = [&](uint32_t arch, uint32_t nr, const std::array<uint64_t, 6>& args,
                     std::vector<uint32_t>* trace) {
    const BpfRun run = run_bpf(*program, SeccompData{nr, arch, 0, args}, trace);
    const auto action = decode_seccomp_ret(run.ret);
    return std::pair{action && action->kind != ir::Action::Kind::Allow, run.ret};
  };
  const char* network = ir::to_string(resolved.network);
  auto report = [&](std::string probe, uint32_t arch, uint32_t nr,
                    const std::array<uint64_t, 6>& args) {
    std::vector<uint32_t> trace;
    const auto [ok, ret] = refused(arch, nr, args, &trace);
    if (ok) return;
    Finding f{"linux",
              "dropped-deny",
              resolved.network_loc,
              std::move(probe),
              std::string("refused: network ") + network +
                  " reaches no host socket file or abstract name",
              seccomp_action_text(ret),
              {}};
    std::string path = "seccomp.bpf path";
    for (uint32_t pc : trace) path += " " + std::to_string(pc);
    f.trace.push_back(std::move(path));
    out.push_back(std::move(f));
  };
  // The first failing probe of each call on each ABI: the rest say the same.
  std::set<std::pair<ir::Arch, std::string_view>> reported;
  for (const Probe& p : probes(resolved.network)) {
    const ir::SyscallInfo* info = ir::find_syscall(p.arch, p.name);
    if (!info) continue;  // the ABI has no such call
    if (reported.contains({p.arch, p.name})) continue;
    const size_t before = out.size();
    std::string text = std::string(ir::to_string(p.arch)) + " " + p.name + "(";
    for (size_t i = 0; i < p.args.size(); ++i) text += (i ? ", " : "") + hex(p.args[i]);
    report(text + ")", ir::audit_arch(p.arch), info->nr, p.args);
    if (out.size() != before) reported.insert({p.arch, p.name});
  }
  // i386 reaches every socket call through socketcall(2) as well, its arguments in memory.
  report("i386 socketcall", ir::kAuditArchI386, kI386Socketcall, {});
  return out;
}

}  // namespace zpolicy::compiler
