#include "compiler/lint/kernel_filesystems.hpp"

#if defined(__linux__)
#include <linux/magic.h>
#include <sys/vfs.h>
#endif

namespace zpolicy::compiler {

#if defined(__linux__)
namespace {

struct KernelFilesystem {
  unsigned long magic;  // statfs's f_type
  const char* name;
};

// The constants linux/magic.h lacks are the kernel's own (the filesystem's source).
constexpr KernelFilesystem kKernelFilesystems[] = {
    {PROC_SUPER_MAGIC, "procfs"},
    {SYSFS_MAGIC, "sysfs"},
    {CGROUP_SUPER_MAGIC, "cgroup"},
    {CGROUP2_SUPER_MAGIC, "cgroup"},
    {DEBUGFS_MAGIC, "debugfs"},
    {TRACEFS_MAGIC, "tracefs"},
    {SECURITYFS_MAGIC, "securityfs"},
    {0x62656570, "configfs"},
    {EFIVARFS_MAGIC, "efivarfs"},
    {PSTOREFS_MAGIC, "pstore"},
    {BPF_FS_MAGIC, "bpf"},
    {BINFMTFS_MAGIC, "binfmt_misc"},
    {0x65735543, "fusectl"},
    {SELINUX_MAGIC, "selinuxfs"},
    {SMACK_MAGIC, "smackfs"},
    {RDTGROUP_SUPER_MAGIC, "resctrl"},
    {0x19800202, "mqueue"},  // the message queues of the host's IPC namespace
    {0x6e667364, "nfsd"},    // the NFS server's threads, exports and versions
    {0x67596969, "rpc_pipefs"},
    {XENFS_SUPER_MAGIC, "xenfs"},
    {BINDERFS_SUPER_MAGIC, "binderfs"},
    {0xa647361, "functionfs"},
    {0xaee71ee7, "gadgetfs"},
    {0x76a9f425, "ocfs2_dlmfs"},
};

}  // namespace
#endif

std::optional<std::string> kernel_interface_at(const std::string& path) {
#if defined(__linux__)
  struct statfs fs {};
  if (statfs(path.c_str(), &fs) != 0) return std::nullopt;
  for (const auto& k : kKernelFilesystems)
    if (static_cast<unsigned long>(fs.f_type) == k.magic) return k.name;
  return std::nullopt;
#else
  (void)path;
  return std::nullopt;
#endif
}

}  // namespace zpolicy::compiler
