#include "compiler/analyzer/seccomp/keyring_invariant.hpp"

#include "compiler/analyzer/seccomp/invariant_probes.hpp"

namespace zpolicy::compiler {
namespace {

// Written out here rather than taken from the baseline: the check must not share a
// mistake with what it checks. The numbers are the uapi's (linux/fscrypt.h), _IOR/_IOW/
// _IOWR('f', N, struct) with the struct's size.
constexpr uint64_t kFscryptCommands[] = {
    0x800c6613,  // FS_IOC_SET_ENCRYPTION_POLICY, 'f' 19, struct fscrypt_policy_v1 (12)
    0x40106614,  // FS_IOC_GET_ENCRYPTION_PWSALT, 'f' 20, __u8[16]
    0xc0506617,  // FS_IOC_ADD_ENCRYPTION_KEY, 'f' 23, struct fscrypt_add_key_arg (80)
    0xc0406618,  // FS_IOC_REMOVE_ENCRYPTION_KEY, 'f' 24, struct fscrypt_remove_key_arg (64)
    0xc0406619,  // FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS, 'f' 25, the same struct
};
constexpr uint64_t kAddress = 0x1000, kOtherAddress = 0x2000;
constexpr uint64_t kSessionKeyring = 0xfffffffd;  // KEY_SPEC_SESSION_KEYRING, -3
constexpr uint64_t kKeyctlCommands[] = {0 /* GET_KEYRING_ID */, 2 /* UPDATE */, 8 /* SEARCH */,
                                        29 /* RESTRICT_KEYRING */};

std::vector<InvariantProbe> keyring_probes() {
  std::vector<InvariantProbe> out;
  for (ir::Arch a : {ir::Arch::X86_64, ir::Arch::X32, ir::Arch::I386}) {
    auto find = [&](const char* name) { return ir::find_syscall(a, name); };
    for (uint64_t command : kKeyctlCommands)
      out.push_back({a, find("keyctl"), {command, kSessionKeyring, kAddress, 0, 0}});
    out.push_back({a, find("add_key"), {kAddress, kOtherAddress, kAddress, 16, kSessionKeyring}});
    out.push_back({a, find("request_key"), {kAddress, kOtherAddress, 0, kSessionKeyring}});
    for (uint64_t command : kFscryptCommands)
      for (uint64_t fd : {uint64_t{3}, uint64_t{0}})
        for (uint64_t cmd : {command, kUpperHalf | command})
          out.push_back({a, find("ioctl"), {fd, cmd, kAddress}});
  }
  return out;
}

}  // namespace

std::vector<ir::Diagnostic> check_keyring_invariant(std::span<const BpfInsn> program) {
  static const std::vector<InvariantProbe> kProbes = keyring_probes();
  return first_let_through(program, kProbes,
                           {{ir::kBuiltinFile, 0, 0},
                            "refused: no kernel key is added, changed or removed (keyctl, "
                            "add_key, request_key, a filesystem's encryption keyring or "
                            "policy by ioctl)"});
}

}  // namespace zpolicy::compiler
