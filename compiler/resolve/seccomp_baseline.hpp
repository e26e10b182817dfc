#pragma once

#include <string_view>

#include "ir/mode.hpp"
#include "ir/policy.hpp"
#include "ir/syscall_policy.hpp"

namespace zpolicy::compiler {

// The syscall policy a confined run enforces: the mode's baseline denies, the network
// rules of `policy.network`, and the policy's own `syscalls:` section, combined so that
// the most restrictive applying rule wins (see ir/syscall_policy.hpp). Baseline rules
// carry SourceLoc file "<builtin>"; network rules carry the `network:` line.
// danger-full-access yields an allow-all policy (no filter is loaded then).
ir::SyscallPolicy effective_syscalls(const ir::Policy& policy, ir::Mode mode);

// Clone flags that create a namespace; clone() with any of them is denied. clone3 cannot
// be inspected (its flags live in memory), so it answers ENOSYS and libc falls back to
// clone.
inline constexpr uint64_t kNamespaceCloneFlags[] = {
    0x00020000,  // CLONE_NEWNS
    0x02000000,  // CLONE_NEWCGROUP
    0x04000000,  // CLONE_NEWUTS
    0x08000000,  // CLONE_NEWIPC
    0x10000000,  // CLONE_NEWUSER
    0x20000000,  // CLONE_NEWPID
    0x40000000,  // CLONE_NEWNET
};

// The calls that create a file or change a mode, and which argument holds the mode. A
// call among them whose mode has S_ISUID or S_ISGID is denied; openat2 (mode in memory)
// answers ENOSYS.
struct ModeArgument {
  std::string_view name;
  unsigned mode_index;
};
inline constexpr ModeArgument kModeArguments[] = {
    {"chmod", 1},  {"fchmod", 1},  {"fchmodat", 2}, {"fchmodat2", 2}, {"open", 2},
    {"openat", 3}, {"creat", 1},   {"mknod", 1},    {"mknodat", 2},   {"mkdir", 1},
    {"mkdirat", 2},
};
inline constexpr uint64_t kS_ISUID = 04000;
inline constexpr uint64_t kS_ISGID = 02000;

// The calls that set a mode as given (no umask applies), and which argument holds it. One
// whose mode has S_IWOTH is denied: the sandbox owns the caller's directories, and one it
// opened to every local user (the workspace, a nested repository's directory, a pin) let
// another user swap the protected paths in it after the run (red team A27B-1).
inline constexpr ModeArgument kModeChanges[] = {
    {"chmod", 1}, {"fchmod", 1}, {"fchmodat", 2}, {"fchmodat2", 2}};
inline constexpr uint64_t kS_IWOTH = 00002;
// The calls that set or remove an extended attribute, POSIX ACLs (system.posix_acl_access,
// system.posix_acl_default) among them; the filter cannot read the name, so each answers
// EOPNOTSUPP, as a filesystem without extended attributes does, which copying tools take
// for "nothing to preserve" (A27B-1: an ACL gave others what chmod no longer may).
inline constexpr std::string_view kAttributeChanges[] = {
    "setxattr",    "lsetxattr",    "fsetxattr",    "setxattrat",
    "removexattr", "lremovexattr", "fremovexattr", "removexattrat"};
inline constexpr uint16_t kEOPNOTSUPP = 95;

// The ioctl() commands that change a filesystem's encryption state (fscrypt: ext4, f2fs,
// ubifs, ceph; ext4's and f2fs's own names for them share these numbers). The keys live in
// the filesystem's keyring, not the process's: one the sandbox adds stays until the host
// unmounts the filesystem, charged to the caller's uid's key quota, and removing one locks
// the caller's encrypted directories on the host; none asks for a writable mount (red team
// A28C-1). Each answers EOPNOTSUPP, as a filesystem without encryption does. Reading the
// state (a policy, a key's status, a nonce) stays allowed.
inline constexpr uint64_t kFscryptChanges[] = {
    0x800c6613,  // FS_IOC_SET_ENCRYPTION_POLICY
    0x40106614,  // FS_IOC_GET_ENCRYPTION_PWSALT: writes a salt into the superblock once
    0xc0506617,  // FS_IOC_ADD_ENCRYPTION_KEY
    0xc0406618,  // FS_IOC_REMOVE_ENCRYPTION_KEY
    0xc0406619,  // FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS
};

inline constexpr uint64_t kTIOCSTI = 0x5412;
inline constexpr uint64_t kTIOCLINUX = 0x541C;
// fcntl()'s commands that put a lease (F_SETLEASE) or a delegation (F_SETDELEG, Linux 6.19)
// on the file's inode, which every process on the host then waits on.
inline constexpr uint64_t kF_SETLEASE = 1024;
inline constexpr uint64_t kF_SETDELEG = 1024 + 16;
// Signal-driven I/O: fcntl(F_SETFL) with O_ASYNC, and ioctl(FIOASYNC), turn it on for an
// open file; fcntl(F_SETSIG) chooses the signal its owner gets.
inline constexpr uint64_t kF_SETFL = 4;
inline constexpr uint64_t kF_SETSIG = 10;
inline constexpr uint64_t kO_ASYNC = 020000;
inline constexpr uint64_t kFIOASYNC = 0x5452;
inline constexpr uint64_t kAF_UNIX = 1;
inline constexpr uint64_t kAF_INET = 2;
inline constexpr uint64_t kAF_INET6 = 10;
// The protocols socket(AF_INET or AF_INET6, ...) may name under `loopback` and an allow
// list: IPPROTO_IP (0, the type's default), ICMP (1, ping sockets), TCP (6), UDP (17),
// ICMPV6 (58), UDPLITE (136) and MPTCP (262), all built into the kernel with IPv4 and IPv6.
// The kernel asks modprobe, as root on the host and with no capability check, for any
// other protocol it does not know (`net-pf-2-proto-132-type-1`: SCTP; L2TP, SMC, DCCP), and
// a module loaded stays loaded after the run (red team A28C-2). The protocol is an int.
inline constexpr uint64_t kInetProtocols[] = {0, 1, 6, 17, 58, 136, 262};
// socket()'s type SOCK_PACKET (10) with AF_INET is turned into AF_PACKET by the kernel,
// which loads that family's module on the way.
inline constexpr uint64_t kSOCK_PACKET = 10;
inline constexpr uint64_t kSOCK_TYPE_MASK = 0xf;
// socketpair()'s type argument: the kernel reads the type from its low four bits
// (SOCK_TYPE_MASK) and allows only SOCK_NONBLOCK and SOCK_CLOEXEC above them.
inline constexpr uint64_t kSOCK_STREAM = 1;
inline constexpr uint64_t kSOCK_SEQPACKET = 5;
inline constexpr uint16_t kENOSYS = 38;

}  // namespace zpolicy::compiler
