#include "compiler/resolve/seccomp_baseline.hpp"

#include <string_view>

namespace zpolicy::compiler {
namespace {

// Each entry is documented in docs/seccomp.md.
constexpr std::string_view kBaselineDenies[] = {
    // Reading or steering other processes' memory, or taking their files: each of these
    // is a ptrace-mode access and gives part of what ptrace would.
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise",
    "kcmp", "process_mrelease",
    // Changing the mount table: would undo the read-only binds and protected subpaths.
    "mount", "umount2", "pivot_root", "move_mount", "open_tree", "open_tree_attr",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    // New namespaces give a fresh set of capabilities over new mounts and networks.
    "unshare", "setns",
    // Kernel keyrings are shared with the host user.
    "keyctl", "add_key", "request_key",
    // Large kernel attack surface, not needed by ordinary programs.
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register",
    // Host-wide state.
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "open_by_handle_at", "swapon", "swapoff", "reboot", "syslog", "acct", "quotactl",
    "quotactl_fd", "iopl", "ioperm",
};

ir::SyscallRule rule(std::string_view name, ir::Action action, ir::SourceLoc loc,
                     std::vector<ir::ArgCondition> conditions = {}) {
  return {std::string(name), action, std::move(conditions), std::move(loc)};
}

ir::ArgCondition arg(unsigned index, ir::CmpOp op, uint64_t value) {
  return {index, op, value, ~uint64_t{0}};
}

// A sandbox started by root runs as host uid 0 and owns what it creates; a setuid or
// setgid bit it set would outlive the run and hand root to any host user. Every call
// that takes a mode is refused when the mode asks for S_ISUID or S_ISGID, whatever the
// other arguments say (open/openat too without O_CREAT: the kernel ignores the mode
// then, so nothing is lost, and O_TMPFILE needs no O_CREAT). The kernel reads the mode
// as a umode_t, so only its low bits count and a masked test on them is exact.
// mkdir never sets either bit from its mode (the kernel keeps only rwx and sticky), but
// refusing it too keeps the rule one sentence. openat2 carries its mode in memory the
// filter cannot read: ENOSYS, and libc falls back to openat.
void add_setid_mode_denies(ir::SyscallPolicy& out, ir::Action deny) {
  const ir::SourceLoc builtin{ir::kBuiltinFile, 0, 0};
  for (const auto& call : kModeArguments)
    for (uint64_t bit : {kS_ISUID, kS_ISGID})
      out.rules.push_back(
          rule(call.name, deny, builtin, {{call.mode_index, ir::CmpOp::MaskedEq, bit, bit}}));
  out.rules.push_back(rule("openat2", ir::Action::errno_(kENOSYS), builtin));
}

// The sandbox keeps the caller's uid and owns the caller's directories, the workspace
// and those holding its protected paths among them: a mode or ACL that lets every local
// user write one outlives the run, and another user then renames `node_modules` or `.git`
// away and puts their own there, which the caller's next `npm test` or `git status` runs
// (red team A27B-1). So a mode as chmod sets it (no umask applies) may not have S_IWOTH,
// and no extended attribute (an ACL is one) is set or removed. Write for the group stays:
// `chmod +x` keeps the g+w a umask of 002 gave, everyday on Debian's user groups.
void add_shared_access_denies(ir::SyscallPolicy& out, ir::Action deny) {
  const ir::SourceLoc builtin{ir::kBuiltinFile, 0, 0};
  for (const auto& call : kModeChanges)
    out.rules.push_back(rule(call.name, deny, builtin,
                             {{call.mode_index, ir::CmpOp::MaskedEq, kS_IWOTH, kS_IWOTH}}));
  for (auto name : kAttributeChanges)
    out.rules.push_back(rule(name, ir::Action::errno_(kEOPNOTSUPP), builtin));
}

// Kernel keys outlive the sandbox and are not namespaced: keyctl, add_key and request_key
// are denied with the baseline, and a filesystem's encryption keyring is reached by
// ioctl() on any file of it, a read-only one included. From inside, a key added there
// stayed after the run (until the host unmounts the filesystem) and used up the caller's
// key quota, and the removal of the caller's own key locked their encrypted home on the
// host (red team A28C-1).
void add_filesystem_keyring_denies(ir::SyscallPolicy& out) {
  const ir::SourceLoc builtin{ir::kBuiltinFile, 0, 0};
  for (uint64_t command : kFscryptChanges)
    out.rules.push_back(
        rule("ioctl", ir::Action::errno_(kEOPNOTSUPP), builtin, {arg(1, ir::CmpOp::Eq, command)}));
}

void add_baseline(ir::SyscallPolicy& out, ir::Action deny) {
  const ir::SourceLoc builtin{ir::kBuiltinFile, 0, 0};
  for (auto name : kBaselineDenies) out.rules.push_back(rule(name, deny, builtin));
  for (uint64_t flag : kNamespaceCloneFlags)
    out.rules.push_back(rule("clone", deny, builtin, {{0, ir::CmpOp::MaskedEq, flag, flag}}));
  out.rules.push_back(rule("clone3", ir::Action::errno_(kENOSYS), builtin));
  out.rules.push_back(rule("ioctl", deny, builtin, {arg(1, ir::CmpOp::Eq, kTIOCSTI)}));
  out.rules.push_back(rule("ioctl", deny, builtin, {arg(1, ir::CmpOp::Eq, kTIOCLINUX)}));
  // A lease is kernel state on the host's inode, not on the sandbox's view of it: the
  // read-only mount does not stop it (the file is opened for reading), and it asks only
  // that the caller own the file. Held, every open of the file by any host process waits
  // for the lease break time (45 s) for the sandbox to give it up (red team A25B-1).
  for (uint64_t command : {kF_SETLEASE, kF_SETDELEG})
    out.rules.push_back(rule("fcntl", deny, builtin, {arg(1, ir::CmpOp::Eq, command)}));
  // Signal-driven I/O on a terminal signals the terminal's foreground process group, which
  // the kernel takes as the open file's owner when O_ASYNC is turned on: on the caller's
  // controlling terminal that is the caller's job, on the host, with whatever signal
  // F_SETSIG chose. SIGKILL ended zpolicy, its pipeline and a script's shell; SIGSTOP
  // stopped zpolicy, and the command outlived its timeout (red team A27A-1). Turning it on
  // is refused for every open file: the filter cannot tell a terminal from the sandbox's
  // own pipes and sockets, and programs poll instead. So is choosing the signal: a pipe or
  // socket on 0-2 is the caller's own open file, and where the caller had signal-driven I/O
  // on it for itself, F_SETSIG made its next SIGIO a SIGKILL.
  out.rules.push_back(
      rule("fcntl", deny, builtin,
           {arg(1, ir::CmpOp::Eq, kF_SETFL), {2, ir::CmpOp::MaskedEq, kO_ASYNC, kO_ASYNC}}));
  out.rules.push_back(rule("fcntl", deny, builtin, {arg(1, ir::CmpOp::Eq, kF_SETSIG)}));
  out.rules.push_back(rule("ioctl", deny, builtin, {arg(1, ir::CmpOp::Eq, kFIOASYNC)}));
  add_setid_mode_denies(out, deny);
  add_shared_access_denies(out, deny);
  add_filesystem_keyring_denies(out);
}

// Under `loopback` and an allow list AF_INET and AF_INET6 sockets reach only the sandbox's
// own loopback, but making one of a protocol the kernel does not know asks modprobe, on the
// host, for the module that would provide it, whatever the caller's capabilities: SCTP,
// L2TP, SMC and DCCP are such modules, each more kernel code for every process on the host,
// loaded until the host unloads it (red team A28C-2). So the protocol must be one the kernel
// has built in, and SOCK_PACKET (which the kernel turns into AF_PACKET) is refused.
void add_inet_protocol_denies(ir::SyscallPolicy& out, const ir::SourceLoc& loc, ir::Action deny) {
  std::vector<ir::ArgCondition> unknown;
  for (uint64_t protocol : kInetProtocols) unknown.push_back(arg(2, ir::CmpOp::Ne, protocol));
  out.rules.push_back(rule("socket", deny, loc, std::move(unknown)));
  out.rules.push_back(
      rule("socket", deny, loc, {{1, ir::CmpOp::MaskedEq, kSOCK_PACKET, kSOCK_TYPE_MASK}}));
}

// `none`: no socket() at all, AF_UNIX included, because host unix sockets stay reachable
// through the read-only filesystem (a read-only mount does not stop connect() or
// sendto() to a socket file). `loopback`: the sandbox has its own network namespace
// holding only `lo`, so AF_INET and AF_INET6 sockets reach nothing but the sandbox
// itself; every other family (AF_UNIX for the reason above, AF_NETLINK, AF_PACKET,
// AF_VSOCK, ...) stays denied. `allow` is `loopback` for the filter: the runner's proxy
// and forwards listen on that loopback (docs/network.md). `full`: no network rules.
//
// Under both, socketpair() may make a private AF_UNIX pair only of a connected type:
// SOCK_STREAM or SOCK_SEQPACKET, whose ends refuse connect() (EISCONN) and ignore or
// refuse a sendto() address. A SOCK_DGRAM end (SOCK_RAW is one too, for AF_UNIX) takes
// any address per call and would reach every host socket file. The three masked tests
// leave exactly the types 1 and 5 of the low four bits: bit 0 set, bits 1 and 3 clear.
//
// Under `none` no socket the sandbox makes can address anything, so connect() and a
// sendto() with an address serve only sockets handed in from outside (stdio): refusing
// them too narrows what such a socket can reach. sendmsg() cannot be filtered on its
// address (it lies in memory); docs/seccomp.md names that limit. bind() likewise serves
// only a handed-in socket under `none` (a socketpair end is never bound), and on one it
// took a name in the host's network namespace: a unix socket pair on stdin (what Node
// gives a child) bound a host abstract name, and the host's own bind() of that name then
// failed EADDRINUSE while the socket lived (red team A26B-2).
void add_network(ir::SyscallPolicy& out, const ir::Located<ir::Network>& network,
                 ir::Action deny) {
  switch (network.value) {
    case ir::Network::None:
      out.rules.push_back(rule("socket", deny, network.loc));
      out.rules.push_back(rule("connect", deny, network.loc));
      out.rules.push_back(rule("bind", deny, network.loc));
      out.rules.push_back(rule("sendto", deny, network.loc, {arg(4, ir::CmpOp::Ne, 0)}));
      break;
    case ir::Network::Loopback:
    case ir::Network::Allow:  // the proxy listens on the sandbox's own loopback
      out.rules.push_back(rule("socket", deny, network.loc,
                               {arg(0, ir::CmpOp::Ne, kAF_INET),
                                arg(0, ir::CmpOp::Ne, kAF_INET6)}));
      add_inet_protocol_denies(out, network.loc, deny);
      break;
    case ir::Network::Full:
      return;
  }
  out.rules.push_back(
      rule("socketpair", deny, network.loc, {arg(0, ir::CmpOp::Ne, kAF_UNIX)}));
  constexpr uint64_t bit0 = 0x1, bit1 = 0x2, bit3 = 0x8;
  static_assert([] {
    for (uint64_t type = 0; type < 16; ++type) {
      const bool passes = (type & bit0) != 0 && (type & bit1) == 0 && (type & bit3) == 0;
      if (passes != (type == kSOCK_STREAM || type == kSOCK_SEQPACKET)) return false;
    }
    return true;
  }());
  out.rules.push_back(rule("socketpair", deny, network.loc,
                           {{1, ir::CmpOp::MaskedEq, 0, bit0}}));
  out.rules.push_back(rule("socketpair", deny, network.loc,
                           {{1, ir::CmpOp::MaskedEq, bit1, bit1}}));
  out.rules.push_back(rule("socketpair", deny, network.loc,
                           {{1, ir::CmpOp::MaskedEq, bit3, bit3}}));
}

}  // namespace

ir::SyscallPolicy effective_syscalls(const ir::Policy& policy, ir::Mode mode) {
  ir::SyscallPolicy out;
  if (!ir::is_confined(mode)) {
    out.default_action = ir::Action::allow();
    out.unknown_number_action = ir::Action::allow();
    out.foreign_abi_action = ir::Action::allow();
    return out;
  }
  const auto& spec = policy.syscalls;
  // An allow-list's action is its default; a deny-list's is what its rules (and the
  // baseline) answer. Either way it is the answer the policy chose for a refused call.
  const ir::Action deny = spec.action.value;
  if (spec.style == ir::SyscallSpec::Style::AllowList) out.default_action = deny;
  add_baseline(out, deny);
  // read-only never has a network, whatever the policy says for the wider modes: the
  // filter must say so too, or a read-only run of a `network: full` policy could
  // socket(AF_UNIX) its way to every host socket file.
  ir::Located<ir::Network> network = policy.network;
  if (mode == ir::Mode::ReadOnly && network.value != ir::Network::None)
    network = {ir::Network::None, policy.mode.loc.file.empty()
                                      ? ir::SourceLoc{ir::kBuiltinFile, 0, 0}
                                      : policy.mode.loc};
  add_network(out, network, deny);
  for (const auto& r : spec.rules) out.rules.push_back(r);
  return out;
}

}  // namespace zpolicy::compiler
