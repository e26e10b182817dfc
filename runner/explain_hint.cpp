#include "runner/explain_hint.hpp"

#include <csignal>
#include <cstring>

#include "zpolicy/exit_code.hpp"

namespace zpolicy::runner {
namespace {

// `word` as one shell word: as it is when it holds nothing a shell reads, else quoted.
std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_-./:=@%+,") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::optional<std::string> explain_hint(const RunRequest& request, bool confined, int status,
                                        bool started) {
  if (!confined || status == kExitOk || status == kExitUnavailable || status == kExitTimeout ||
      status == kExitInternal)
    return std::nullopt;
  const bool signalled = status > kExitSignalBase && status < kExitSignalBase + 65;
  if (!started && signalled) return std::nullopt;
  const bool sigsys = started && status == kExitSignalBase + SIGSYS;
  std::string how = !started   ? "did not start (status " + std::to_string(status) + ")"
                    : signalled ? std::string("was killed by signal ") +
                                      std::to_string(status - kExitSignalBase) +
                                      (sigsys ? " (SIGSYS: a system call the policy kills)" : "")
                                : "exited with status " + std::to_string(status);
  std::string args;
  std::string policy = "the built-in default policy";
  if (request.policy_path) {
    args += " --policy " + shell_word(*request.policy_path);
    policy = *request.policy_path;
  }
  if (request.mode != request.policy.mode.value)
    args += std::string(" --mode ") + ir::to_string(request.mode);
  if (request.workspace) args += " --workspace " + shell_word(*request.workspace);
  return "zpolicy: the command " + how + " under " + policy + " in mode " +
         ir::to_string(request.mode) +
         (started ? "; whether the sandbox refused it: zpolicy explain"
                  : "; whether the sandbox hides it or its working directory: zpolicy explain") +
         args + (sigsys ? " --syscall NAME" : " PATH");
}

}  // namespace zpolicy::runner
