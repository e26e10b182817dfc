#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/backend_paths.hpp"

// The macOS backend as data: the sandbox-exec command line and the meaning of its exit
// status. No platform calls, so it builds and is tested on every host; runner/ spawns it.
namespace zpolicy::runner {

// Pinned: resolving sandbox-exec through PATH or the workspace would let the sandboxed
// project pick its own "sandbox".
inline constexpr std::string_view kSandboxExec = compiler::kSandboxExecPath;

// A program that exists on every macOS install and exits 0; see preflight_argv.
inline constexpr std::string_view kPreflightCommand = "/usr/bin/true";

struct SandboxExecArgvError {
  std::string message;
};

// {"/usr/bin/sandbox-exec", "-p", PROFILE, "-D", "NAME=VALUE", ..., "--", CMD, ARGS...}.
// Refuses an empty command, a parameter name outside [A-Z0-9_] or starting with a digit,
// and a NUL anywhere (it would silently cut an argument short).
std::variant<std::vector<std::string>, SandboxExecArgvError> sandbox_exec_argv(
    std::string_view profile, const std::vector<std::pair<std::string, std::string>>& params,
    const std::vector<std::string>& command);

// Why sandbox-exec could not confine the command. The runner reports these as backend
// unavailable (exit 4) and never retries without the sandbox.
enum class SandboxExecRefusal {
  BadProfile,        // exit 65 (EX_DATAERR): the kernel rejected the profile
  AlreadySandboxed,  // exit 71 (EX_OSERR): this process is already in a sandbox
  Failed,            // any other non-zero status of the preflight
};

const char* to_string(SandboxExecRefusal r);

struct SandboxExecStatus {
  SandboxExecRefusal refusal;
  std::string message;  // one line, for the user
};

// sandbox-exec execs the command in its own process, so once the command runs its exit
// status is the command's and 65 or 71 could be the command's own. The runner therefore
// first runs the same profile and parameters around kPreflightCommand: only that run's
// status is read as sandbox-exec's verdict.
std::variant<std::vector<std::string>, SandboxExecArgvError> preflight_argv(
    std::string_view profile, const std::vector<std::pair<std::string, std::string>>& params);

// nullopt when the preflight exited 0 (the sandbox applies); the refusal otherwise.
// `exit_status` is the process's exit code (WEXITSTATUS); a signal counts as Failed.
std::optional<SandboxExecStatus> classify_preflight(int exit_status, bool killed_by_signal);

}  // namespace zpolicy::runner
