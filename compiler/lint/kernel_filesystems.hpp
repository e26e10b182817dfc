#pragma once

#include <optional>
#include <string>

namespace zpolicy::compiler {

// The kind of kernel interface the filesystem holding `path` is (procfs, sysfs, cgroup,
// debugfs, tracefs, securityfs, configfs, efivarfs, pstore, bpf, binfmt_misc, fusectl,
// selinuxfs, smackfs, resctrl, mqueue, nfsd, rpc_pipefs, xenfs, binderfs, functionfs,
// gadgetfs, ocfs2_dlmfs), by its filesystem type, whatever the path is called:
// such a filesystem's files are host kernel state, and a sandbox started by root that
// could write them changes the host (DESIGN.md invariant 10). Nullopt for any other
// filesystem, one that cannot be looked at, and off Linux.
std::optional<std::string> kernel_interface_at(const std::string& path);

}  // namespace zpolicy::compiler
