#pragma once

#include <span>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"
#include "ir/diagnostic.hpp"

namespace zpolicy::compiler {

// Invariant 10 for kernel keys, checked on the program itself: a key outlives the sandbox
// and is not namespaced, so the program must refuse keyctl, add_key and request_key with
// any arguments, and the ioctl() commands that change a filesystem's encryption keyring or
// policy (FS_IOC_ADD_ENCRYPTION_KEY, FS_IOC_REMOVE_ENCRYPTION_KEY(_ALL_USERS),
// FS_IOC_SET_ENCRYPTION_POLICY, FS_IOC_GET_ENCRYPTION_PWSALT), on any descriptor and with
// garbage in the high half of the command, which the kernel reads as an unsigned int (red
// team A28C-1: a key added from a read-only sandbox stayed on the host's filesystem, and
// the caller's own key removed locked their encrypted home). The same on the x32 and i386
// ABIs. Returns one finding per call and ABI the program lets through. `program` is
// seccomp.bpf as parse_bpf reads it.
std::vector<ir::Diagnostic> check_keyring_invariant(std::span<const BpfInsn> program);

}  // namespace zpolicy::compiler
