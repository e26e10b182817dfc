#pragma once

#include <string>
#include <vector>

#include "runner/backend.hpp"

namespace zpolicy::runner {

// One fact `zpolicy doctor` checks about the host: what it found, and, when it stands
// in the way of a sandbox, the typed reason (runner/backend.hpp) and the exact fix.
struct HostCheck {
  enum class Status { Ok, Info, Warning, Failed };
  std::string id;      // stable: "kernel", "bwrap", "user-namespaces", ...
  Status status = Status::Ok;
  std::string value;   // what was found, one line
  std::string reason;  // the typed reason of a failure (to_string(Unavailability)), or ""
  std::string fix;     // what to do about a warning or failure, or ""
};
const char* to_string(HostCheck::Status s);

// The deployment report: every check, then the backend's verdict, which decides (a run
// refuses with exit 4 exactly when `backend` is not usable). Starts bwrap once (the probe).
// The user-namespace switches as read from /proc/sys ("" when the file is absent), and
// the verdict on them. Pure, so every message is testable without changing the host.
struct UserNamespaceSysctls {
  std::string max_user_namespaces;        // user.max_user_namespaces
  std::string unprivileged_userns_clone;  // kernel.unprivileged_userns_clone (Debian)
  std::string apparmor_restrict;          // kernel.apparmor_restrict_unprivileged_userns (Ubuntu)
  bool caller_is_root = false;
};
HostCheck user_namespaces_check(const UserNamespaceSysctls& sysctls);

struct DoctorReport {
  std::vector<HostCheck> checks;
  BackendStatus backend;
};
DoctorReport doctor();

}  // namespace zpolicy::runner
