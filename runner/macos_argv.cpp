#include "runner/macos_argv.hpp"

namespace zpolicy::runner {
namespace {

bool valid_param_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

bool has_nul(std::string_view s) { return s.find('\0') != std::string_view::npos; }

}  // namespace

std::variant<std::vector<std::string>, SandboxExecArgvError> sandbox_exec_argv(
    std::string_view profile, const std::vector<std::pair<std::string, std::string>>& params,
    const std::vector<std::string>& command) {
  if (command.empty()) return SandboxExecArgvError{"no command to run"};
  if (has_nul(profile)) return SandboxExecArgvError{"the profile contains a NUL byte"};
  std::vector<std::string> argv = {std::string(kSandboxExec), "-p", std::string(profile)};
  for (const auto& [name, value] : params) {
    if (!valid_param_name(name))
      return SandboxExecArgvError{"invalid parameter name '" + name + "'"};
    if (has_nul(value)) return SandboxExecArgvError{"parameter " + name + " contains a NUL byte"};
    argv.push_back("-D");
    argv.push_back(name + "=" + value);
  }
  argv.push_back("--");
  for (const auto& arg : command) {
    if (has_nul(arg)) return SandboxExecArgvError{"a command argument contains a NUL byte"};
    argv.push_back(arg);
  }
  return argv;
}

std::variant<std::vector<std::string>, SandboxExecArgvError> preflight_argv(
    std::string_view profile, const std::vector<std::pair<std::string, std::string>>& params) {
  return sandbox_exec_argv(profile, params, {std::string(kPreflightCommand)});
}

const char* to_string(SandboxExecRefusal r) {
  switch (r) {
    case SandboxExecRefusal::BadProfile:
      return "bad-profile";
    case SandboxExecRefusal::AlreadySandboxed:
      return "already-sandboxed";
    case SandboxExecRefusal::Failed:
      return "sandbox-exec-failed";
  }
  return "sandbox-exec-failed";
}

std::optional<SandboxExecStatus> classify_preflight(int exit_status, bool killed_by_signal) {
  if (killed_by_signal)
    return SandboxExecStatus{SandboxExecRefusal::Failed,
                             "sandbox-exec was killed by signal " + std::to_string(exit_status)};
  switch (exit_status) {
    case 0:
      return std::nullopt;
    case 65:
      return SandboxExecStatus{SandboxExecRefusal::BadProfile,
                               "sandbox-exec rejected the profile (exit 65)"};
    case 71:
      return SandboxExecStatus{SandboxExecRefusal::AlreadySandboxed,
                               "sandbox-exec cannot apply a sandbox here, most likely because "
                               "zpolicy already runs inside one (exit 71)"};
    default:
      return SandboxExecStatus{SandboxExecRefusal::Failed, "sandbox-exec failed with exit status " +
                                                               std::to_string(exit_status)};
  }
}

}  // namespace zpolicy::runner
