#pragma once

#include <string>

#include "compiler/backend_paths.hpp"

namespace zpolicy::runner {

using compiler::kBwrapPath;

// Why a sandbox cannot be started here. Each is a fail-closed refusal (exit 4).
enum class Unavailability {
  None,
  UnsupportedPlatform,
  Wsl1,
  NotInstalled,
  Untrusted,               // wrong owner or writable by others
  UserNamespacesDisabled,  // sysctl user.max_user_namespaces=0 or unprivileged_userns_clone=0
  AppArmorRestriction,     // kernel.apparmor_restrict_unprivileged_userns=1
  ContainerWithoutNamespaces,
  SeccompUnavailable,
  ForeignProcfs,       // /proc is the procfs of another pid namespace
  Openat2Unavailable,  // openat2(2) fails: Linux before 5.6, or a seccomp filter refuses it
  ProbeTimeout,
  ProbeFailed,
};

const char* to_string(Unavailability u);

struct BackendStatus {
  Unavailability reason = Unavailability::None;
  std::string detail;  // human-readable, one line
  bool usable() const { return reason == Unavailability::None; }
  std::string str() const;  // "<reason>: <detail>"
};

// This platform's backend, as `doctor` names it ("linux backend: /usr/bin/bwrap").
std::string backend_description();

// Why /proc cannot be trusted to name this process ("" when /proc/self is this process).
// In a pid namespace whose /proc is its parent's (`unshare -pf` without --mount-proc), every
// pid the runner and bwrap look up there names some other process.
std::string foreign_procfs();

// Why openat2(2) cannot be used here ("" when it can). The runner opens every bind source,
// status file and stream with it (RESOLVE_NO_SYMLINKS, RESOLVE_IN_ROOT) and has no other
// way: without it every run failed at the bind, exit 125, saying the workspace "is not the
// directory that was verified (replaced or swapped for a symlink)" (red team A22B-2).
std::string openat2_unavailable();

// Why this process has two identities ("" when its real and effective user and group are
// the same and its start gave it nothing its caller lacks: no file capabilities). zpolicy chooses its state directory and judges the owners of its records,
// placeholders and policy files by the real user, and creates them as the effective one:
// run set-user-id or set-group-id (or embedded in such a program) it would act on one
// user's state with another's rights, start the sandbox as the effective user, and run an
// unconfined command (danger-full-access) with the effective user's rights. Not a
// supported deployment: every run refuses (a confined one never runs unconfined instead).
std::string set_id_process();

// Cheap checks done before every run: platform, trusted binary, namespace sysctls,
// seccomp. They read files only; nothing is started.
BackendStatus preflight();

// Starts bwrap with the sandbox's namespace flags on /bin/true, within a time limit,
// and classifies a failure. Used by `doctor` and to explain a run whose setup failed.
BackendStatus probe(int timeout_ms = 5000);

}  // namespace zpolicy::runner
