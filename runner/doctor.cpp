#include "runner/doctor.hpp"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#if defined(__linux__)
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include "compiler/resolve/state_dir.hpp"
#include "runner/host_run_lock.hpp"
#include "runner/placeholders.hpp"
#include "runner/stale_placeholders.hpp"

#if defined(__APPLE__)
#include "runner/macos_argv.hpp"
#endif

namespace zpolicy::runner {
namespace {

using Status = HostCheck::Status;

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The first line a program prints, run without a shell and without PATH.
std::string output_of(const std::string& program, const std::string& arg) {
  std::string command = "'" + program + "' " + arg + " 2>&1";
  FILE* p = popen(command.c_str(), "r");
  if (!p) return "";
  char buf[256] = {};
  std::string out = fgets(buf, sizeof buf, p) ? buf : "";
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

HostCheck platform() {
  utsname u{};
  uname(&u);
  HostCheck c{"platform", Status::Ok, std::string(u.sysname) + " " + u.machine, "", ""};
#if !defined(__linux__) && !defined(__APPLE__)
  c.status = Status::Failed;
  c.reason = to_string(Unavailability::UnsupportedPlatform);
  c.fix = "zpolicy runs sandboxes on Linux (bubblewrap) and macOS (sandbox-exec) only";
#endif
  return c;
}

#if defined(__linux__)
// (major, minor) of the running kernel.
std::pair<int, int> kernel_version(const std::string& release) {
  int major = 0, minor = 0;
  std::sscanf(release.c_str(), "%d.%d", &major, &minor);
  return {major, minor};
}

bool at_least(std::pair<int, int> v, int major, int minor) {
  return v.first > major || (v.first == major && v.second >= minor);
}

HostCheck kernel() {
  const std::string release = first_line("/proc/sys/kernel/osrelease");
  HostCheck c{"kernel", Status::Ok, release, "", ""};
  if (release.find("Microsoft") != std::string::npos) {
    c.status = Status::Failed;
    c.reason = to_string(Unavailability::Wsl1);
    c.fix = "WSL1 has no namespaces: convert the distribution with `wsl --set-version <distro> 2`";
  }
  return c;
}

HostCheck bwrap() {
  HostCheck c{"bwrap", Status::Ok, kBwrapPath, "", ""};
  struct stat st;
  if (lstat(kBwrapPath, &st) != 0) {
    c.status = Status::Failed;
    c.reason = to_string(Unavailability::NotInstalled);
    c.value += " is missing";
    c.fix = "install bubblewrap: `apt-get install bubblewrap` (Debian, Ubuntu), `dnf install "
            "bubblewrap` (Fedora); zpolicy never looks for it in PATH";
    return c;
  }
  std::string version = output_of(kBwrapPath, "--version");
  c.value += " (" + (version.empty() ? std::string("version unknown") : version) + ", owner uid " +
             std::to_string(st.st_uid) + ", mode " +
             [&] {
               char m[8];
               std::snprintf(m, sizeof m, "%04o", st.st_mode & 07777);
               return std::string(m);
             }() +
             ")";
  for (std::string p = kBwrapPath;; p = p.substr(0, std::max<size_t>(p.rfind('/'), 1))) {
    struct stat ps;
    if (stat(p.c_str(), &ps) != 0 || ps.st_uid != 0 || (ps.st_mode & (S_IWGRP | S_IWOTH))) {
      c.status = Status::Failed;
      c.reason = to_string(Unavailability::Untrusted);
      c.fix = p + " must be owned by root and writable by nobody else: `chown root:root " + p +
              " && chmod go-w " + p + "`";
      return c;
    }
    if (p == "/") break;
  }
  if (st.st_mode & S_ISUID) {
    c.status = Status::Warning;
    c.fix = "bwrap is setuid root; zpolicy does not need that (it uses unprivileged user "
            "namespaces), and a setuid bwrap refuses some options: `chmod u-s " +
            std::string(kBwrapPath) + "` where user namespaces are allowed";
  }
  return c;
}

HostCheck user_namespaces() {
  return user_namespaces_check({first_line("/proc/sys/user/max_user_namespaces"),
                                first_line("/proc/sys/kernel/unprivileged_userns_clone"),
                                first_line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
                                getuid() == 0});
}

HostCheck container() {
  HostCheck c{"container", Status::Info, "not in a container", "", ""};
  const bool docker = exists("/.dockerenv");
  const bool podman = exists("/run/.containerenv");
  if (docker || podman) {
    c.value = docker ? "inside a Docker container" : "inside a Podman container";
    c.fix = "the runtime's default seccomp profile refuses the namespaces bwrap needs; if the "
            "sandbox probe fails, start the container with a profile that allows "
            "unshare/clone(CLONE_NEWUSER), e.g. `--security-opt seccomp=unconfined`, or run "
            "zpolicy on the host";
  }
  return c;
}

HostCheck procfs() {
  HostCheck c{"procfs", Status::Ok, "/proc is this pid namespace's", "", ""};
  if (auto foreign = foreign_procfs(); !foreign.empty()) {
    c.status = Status::Failed;
    c.value = foreign;
    c.reason = to_string(Unavailability::ForeignProcfs);
    c.fix =
        "mount a procfs of this pid namespace on /proc (`unshare --pid --fork "
        "--mount-proc`, or the container runtime's default /proc)";
  }
  return c;
}

HostCheck seccomp() {
  HostCheck c{"seccomp", Status::Ok, "", "", ""};
  const std::string actions = first_line("/proc/sys/kernel/seccomp/actions_avail");
  if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
    c.status = Status::Failed;
    c.reason = to_string(Unavailability::SeccompUnavailable);
    c.value = "no seccomp filter support";
    c.fix = "use a kernel built with CONFIG_SECCOMP_FILTER=y";
    return c;
  }
  c.value = "filters supported; actions: " + (actions.empty() ? std::string("?") : actions);
  // The constant-action cache (Linux 5.11) lets the kernel skip the filter for calls the
  // filter always allows; without it every call runs the program.
  const auto v = kernel_version(first_line("/proc/sys/kernel/osrelease"));
  c.value += at_least(v, 5, 11) ? "; action cache: yes" : "; action cache: no (kernel before 5.11)";
  for (const char* needed : {"kill_process", "errno", "allow"})
    if (!actions.empty() && actions.find(needed) == std::string::npos) {
      c.status = Status::Failed;
      c.reason = to_string(Unavailability::SeccompUnavailable);
      c.fix = std::string("the kernel lacks the seccomp action ") + needed +
              "; use Linux 4.14 or later";
    }
  return c;
}

HostCheck openat2() {
  HostCheck c{"openat2", Status::Ok, "available (RESOLVE_NO_SYMLINKS)", "", ""};
  if (auto why = openat2_unavailable(); !why.empty()) {
    c.status = Status::Failed;
    c.value = why;
    c.reason = to_string(Unavailability::Openat2Unavailable);
    c.fix =
        "use Linux 5.6 or later, under a seccomp profile (the container runtime's, the "
        "service's) that allows openat2";
  }
  return c;
}

HostCheck no_new_privs() {
  const int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
  return {"no-new-privs", Status::Info,
          nnp == 1 ? "already set for zpolicy itself (inherited)"
                   : "not set for zpolicy itself; bwrap sets it for the sandbox",
          "", ""};
}

HostCheck landlock() {
  const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return {"landlock", Status::Info,
          abi > 0 ? "ABI " + std::to_string(abi) : "not available (kernel option or LSM list)", "", ""};
}
#endif

HostCheck state_directory() {
#if defined(__linux__)
  const std::string dir = Placeholders::state_dir();
  // Another user took the usual name first (red team R7-L1): runs work, each in a
  // directory of its own that no later run reads (so what a killed run leaves is never
  // reconciled), and the owner of the name is worth knowing.
  if (const std::string note = compiler::zpolicy_state_dir_note(); !note.empty())
    return {"state-directory", Status::Warning, note, "",
            "ask the owner or root to remove the directory of the usual name"};
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0)
    return {"state-directory", Status::Info, dir + " (created by the first run)", "", ""};
  if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
    return {"state-directory", Status::Failed,
            dir + " is not a private directory owned by this user", "",
            "remove it (`rm -rf " + dir + "`); the next run creates it with mode 0700"};
  return {"state-directory", Status::Ok, dir, "", ""};
#else
  return {"state-directory", Status::Info, "none (a macOS run creates no placeholders)", "", ""};
#endif
}

HostCheck host_run_lock() {
#if defined(__linux__)
  // As root this also creates it: the lock must exist before an unprivileged run can
  // coordinate with other users' runs (runner/host_run_lock.hpp).
  const std::string why = HostRunLock::ensure();
  if (why.empty()) return {"host-run-lock", Status::Ok, HostRunLock::kPath, "", ""};
  struct stat st;
  if (lstat(HostRunLock::kDir, &st) != 0 || lstat(HostRunLock::kPath, &st) != 0)
    return {"host-run-lock", Status::Warning,
            why + "; until it exists, runs leave their placeholders in the workspace", "",
            "run `sudo zpolicy doctor` once after each boot (or any run as root)"};
  return {"host-run-lock", Status::Failed,
          why + "; runs leave their placeholders in the workspace", "",
          std::string("as root: `rm -rf ") + HostRunLock::kDir + " && zpolicy doctor`"};
#else
  return {"host-run-lock", Status::Info, "none (a macOS run creates no placeholders)", "", ""};
#endif
}

#if defined(__linux__)
HostCheck stale_placeholders_check() {
  const auto stale = stale_placeholders();
  if (stale.empty()) return {"stale-placeholders", Status::Ok, "none", "", ""};
  std::string value = std::to_string(stale.size()) + " left by runs that ended or died:";
  for (const auto& p : stale) value += " " + p;
  return {"stale-placeholders", Status::Warning, value, "",
          "`zpolicy cleanup` removes them when no run is live"};
}
#endif

}  // namespace

HostCheck user_namespaces_check(const UserNamespaceSysctls& s) {
  HostCheck c{"user-namespaces", Status::Ok, "", "", ""};
  c.value = "user.max_user_namespaces=" + (s.max_user_namespaces.empty() ? std::string("?")
                                                                          : s.max_user_namespaces);
  if (!s.unprivileged_userns_clone.empty())
    c.value += ", kernel.unprivileged_userns_clone=" + s.unprivileged_userns_clone;
  if (!s.apparmor_restrict.empty())
    c.value += ", kernel.apparmor_restrict_unprivileged_userns=" + s.apparmor_restrict;
  // Root may create user namespaces whatever the two unprivileged switches say.
  if (s.max_user_namespaces == "0") {
    c.status = Status::Failed;
    c.reason = to_string(Unavailability::UserNamespacesDisabled);
    c.fix = "`sysctl -w user.max_user_namespaces=15000` (and set it in /etc/sysctl.d/ to keep it)";
  } else if (s.unprivileged_userns_clone == "0" && !s.caller_is_root) {
    c.status = Status::Failed;
    c.reason = to_string(Unavailability::UserNamespacesDisabled);
    c.fix = "`sysctl -w kernel.unprivileged_userns_clone=1` (and set it in /etc/sysctl.d/)";
  } else if (s.apparmor_restrict == "1" && !s.caller_is_root) {
    c.status = Status::Failed;
    c.reason = to_string(Unavailability::AppArmorRestriction);
    c.fix = "load AppArmor's profile for bwrap (Ubuntu 24.04 and later ship it): `ln -s "
            "/usr/share/apparmor/extra-profiles/bwrap-userns-restrict /etc/apparmor.d/ && "
            "apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict`";
  }
  return c;
}

const char* to_string(HostCheck::Status s) {
  switch (s) {
    case Status::Ok:
      return "ok";
    case Status::Info:
      return "info";
    case Status::Warning:
      return "warning";
    case Status::Failed:
      return "failed";
  }
  return "failed";
}

DoctorReport doctor() {
  DoctorReport r;
  r.checks.push_back(platform());
#if defined(__linux__)
  r.checks.push_back(kernel());
  r.checks.push_back(bwrap());
  r.checks.push_back(user_namespaces());
  r.checks.push_back(container());
  r.checks.push_back(procfs());
  r.checks.push_back(seccomp());
  r.checks.push_back(openat2());
  r.checks.push_back(no_new_privs());
  r.checks.push_back(landlock());
#elif defined(__APPLE__)
  r.checks.push_back({"sandbox-exec", Status::Ok, std::string(kSandboxExec), "", ""});
#endif
  r.checks.push_back(state_directory());
  r.checks.push_back(host_run_lock());
#if defined(__linux__)
  r.checks.push_back(stale_placeholders_check());
#endif
  r.backend = probe();
  HostCheck sandbox{"sandbox-probe", r.backend.usable() ? Status::Ok : Status::Failed,
                    r.backend.usable() ? "a sandbox with the namespaces zpolicy uses starts"
                                       : r.backend.detail,
                    r.backend.usable() ? "" : to_string(r.backend.reason), ""};
  if (!r.backend.usable()) {
    // The probe's reason decides; the check that explains it carries the fix.
    for (const auto& c : r.checks)
      if (c.reason == sandbox.reason && !c.fix.empty()) sandbox.fix = c.fix;
    if (sandbox.fix.empty())
      sandbox.fix = "run `" + std::string(kBwrapPath) +
                    " --unshare-all --ro-bind / / -- /bin/true` to see bwrap's own message";
  }
  r.checks.push_back(sandbox);
  return r;
}

}  // namespace zpolicy::runner
