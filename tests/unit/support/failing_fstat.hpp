#pragma once

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <functional>

// A look at an open file's status that fails (fstat(2) of a descriptor: EIO), which no
// file system the tests can make gives: the code under test runs in a forked child whose
// seccomp filter answers fstat, and fstatat/statx with AT_EMPTY_PATH (how glibc's fstat
// asks), with EIO; a stat or lstat by name still works. Returns the child's exit status
// (`body`'s answer, 0..125), or -1 when the filter could not be loaded (the caller skips).
namespace zpolicy::test {

inline int with_failing_fstat(const std::function<int()>& body) {
#if defined(__x86_64__)
  constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#else
  return -1;
#endif
  constexpr unsigned kNr = offsetof(struct seccomp_data, nr);
  constexpr unsigned kArchAt = offsetof(struct seccomp_data, arch);
  // The low half of an argument (little-endian hosts only, as the arches above).
  constexpr auto arg = [](unsigned i) {
    return static_cast<unsigned>(offsetof(struct seccomp_data, args) + 8 * i);
  };
  struct sock_filter prog[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArchAt),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kNr),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fstat, 7, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_newfstatat, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_statx, 3, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg(3)),  // newfstatat's flags
      BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg(2)),  // statx's flags
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, AT_EMPTY_PATH, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EIO),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    struct sock_fprog fprog = {static_cast<unsigned short>(sizeof prog / sizeof prog[0]), prog};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) != 0)
      _exit(126);
    _exit(body());
  }
  int status = 0;
  while (waitpid(pid, &status, 0) == -1 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) == 126) return -1;
  return WEXITSTATUS(status);
}

}  // namespace zpolicy::test
