#include "compiler/lint/kernel_filesystems.hpp"

#if defined(__linux__)
#include <linux/magic.h>
#include <sys/vfs.h>
#endif

namespace zpolicy::compiler {

std::optional<std::string> kernel_interface_at(const std::string& path) {
#if defined(__linux__)
  struct statfs fs {};
  if (statfs(path.c_str(), &fs) != 0) return std::nullopt;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC:
      return "procfs";
    case SYSFS_MAGIC:
      return "sysfs";
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
      return "cgroup";
    case DEBUGFS_MAGIC:
      return "debugfs";
    case TRACEFS_MAGIC:
      return "tracefs";
    case SECURITYFS_MAGIC:
      return "securityfs";
    case 0x62656570:  // configfs
      return "configfs";
    case EFIVARFS_MAGIC:
      return "efivarfs";
    case PSTOREFS_MAGIC:
      return "pstore";
    case BPF_FS_MAGIC:
      return "bpf";
    case BINFMTFS_MAGIC:
      return "binfmt_misc";
    case 0x65735543:  // fusectl
      return "fusectl";
    case SELINUX_MAGIC:
      return "selinuxfs";
    case SMACK_MAGIC:
      return "smackfs";
    case RDTGROUP_SUPER_MAGIC:
      return "resctrl";
    case 0x19800202:  // mqueue: the message queues of the host's IPC namespace
      return "mqueue";
    default:
      return std::nullopt;
  }
#else
  (void)path;
  return std::nullopt;
#endif
}

}  // namespace zpolicy::compiler
