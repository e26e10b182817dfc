#include "compiler/analyzer/seccomp/network_invariant.hpp"

#include "compiler/analyzer/seccomp/invariant_probes.hpp"

namespace zpolicy::compiler {
namespace {

constexpr uint64_t kAF_UNIX = 1, kAF_INET = 2, kAF_INET6 = 10, kAF_NETLINK = 16,
                   kAF_PACKET = 17, kAF_VSOCK = 40;
constexpr uint64_t kSTREAM = 1, kDGRAM = 2, kRAW = 3, kRDM = 4, kSEQPACKET = 5;
constexpr uint64_t kNONBLOCK = 04000, kCLOEXEC = 02000000;
constexpr uint64_t kHigh = uint64_t{1} << 32;
constexpr uint32_t kI386Socketcall = 102;

std::vector<InvariantProbe> probes(ir::Network network) {
  std::vector<InvariantProbe> out;
  auto on_every_abi = [&](const char* name, std::array<uint64_t, 6> args) {
    for (ir::Arch arch : {ir::Arch::X86_64, ir::Arch::X32, ir::Arch::I386})
      out.push_back({arch, ir::find_syscall(arch, name), args});
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
    on_every_abi("bind", {0, 0x1000, 110, 0, 0, 0});
    on_every_abi("sendto", {3, 0x1000, 1, 0, 0x2000, 110});
  }
  return out;
}

// Under `loopback` and an allow list, AF_INET and AF_INET6 sockets of a protocol the kernel
// would ask modprobe for (SCTP 132, L2TP 115, SMC 256, DCCP 33, and any other but the
// built-in ones), with garbage above the int, and of type SOCK_PACKET (which the kernel
// turns into AF_PACKET), red team A28C-2. Written out here, not taken from the baseline.
std::vector<InvariantProbe> module_probes() {
  constexpr uint64_t kPACKET = 10;
  std::vector<InvariantProbe> out;
  for (ir::Arch arch : {ir::Arch::X86_64, ir::Arch::X32, ir::Arch::I386}) {
    const ir::SyscallInfo* socket = ir::find_syscall(arch, "socket");
    for (uint64_t family : {kAF_INET, kAF_INET6}) {
      for (uint64_t type : {kSTREAM, kSEQPACKET, kDGRAM, kSTREAM | kNONBLOCK | kCLOEXEC})
        for (uint64_t protocol : {uint64_t{132}, uint64_t{115}, uint64_t{256}, uint64_t{33},
                                  uint64_t{2}, uint64_t{255}, uint64_t{0xffffffff}, kHigh | 132})
          out.push_back({arch, socket, {family, type, protocol, 0, 0, 0}});
      for (uint64_t protocol : {uint64_t{0}, uint64_t{3} << 8 /* ETH_P_ALL, network order */})
        out.push_back({arch, socket, {family, kPACKET, protocol, 0, 0, 0}});
    }
  }
  return out;
}

}  // namespace

std::vector<ir::Diagnostic> check_network_invariant(const ir::Resolved& resolved,
                                                    std::span<const BpfInsn> program) {
  if (resolved.network == ir::Network::Full) return {};
  const InvariantFinding finding{resolved.network_loc,
                                 std::string("refused: network ") + ir::to_string(resolved.network) +
                                     " reaches no host socket file or abstract name"};
  auto out = first_let_through(program, probes(resolved.network), finding);
  if (resolved.network != ir::Network::None) {  // under none every socket() is refused above
    static const std::vector<InvariantProbe> kModuleProbes = module_probes();
    auto modules = first_let_through(
        program, kModuleProbes,
        {resolved.network_loc, std::string("refused: network ") + ir::to_string(resolved.network) +
                                   " makes no AF_INET or AF_INET6 socket of a protocol or type "
                                   "the kernel would load a module for"});
    out.insert(out.end(), modules.begin(), modules.end());
  }
  // i386 reaches every socket call through socketcall(2) as well, its arguments in memory.
  const SeccompData socketcall{kI386Socketcall, ir::kAuditArchI386, 0, {}};
  if (!refuses(run_bpf(program, socketcall).ret))
    out.push_back(finding.let_through(program, "i386 socketcall", socketcall));
  return out;
}

}  // namespace zpolicy::compiler
