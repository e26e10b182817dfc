#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/resolve/resolve.hpp"
#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"

namespace zpolicy::compiler {

struct LintContext {
  std::optional<HostFacts> host;  // bound checks need the host
  // The policy file as it is opened (absolute; not necessarily canonical: every symlink
  // on its way is checked too).
  std::optional<std::string> policy_file;
  std::optional<std::string> zpolicy_binary;  // canonical
  std::optional<std::string> backend_binary;  // the sandbox backend, e.g. /usr/bin/bwrap
  // The caller's $PATH entries: the host runs what lies there after the sandbox is gone.
  std::vector<std::string> caller_path;
  // The caller's other search paths the host loads code from by name (`LD_LIBRARY_PATH`,
  // `PYTHONPATH`, …), as (variable, entry): a library or module planted there runs in the
  // host's next program of that environment (red team H17-8).
  std::vector<std::pair<std::string, std::string>> caller_load_paths = {};
};

// Reviewer-level findings about a policy that is valid but probably not what its author
// meant, each with its lint ID as code ("ZP001": stable, docs/lints.md, so that CI can
// suppress or gate on them). Sorted by location, then ID. The writable-root lints judge
// `policy.mode`: pass the policy with the mode a run actually gets.
std::vector<ir::Diagnostic> lint_policy(const ir::Policy& policy, const LintContext& ctx);

// Whether an environment name usually carries a credential (ZP012; case-insensitive, a
// trailing '*' ignored): `run --env NAME` warns about the same names.
bool looks_like_secret(std::string name);

// What `run --accept ID` may do with a lint ID.
enum class Acceptance {
  Acceptable,  // an error-level lint naming a risk the user may knowingly take for one run
  Warning,     // a warning-level lint: it never refuses a run, there is nothing to accept
  NotAcceptable,    // an error that is a mistake, not a risk (ZP000, ZP009, ZP100)
  VerifierFinding,  // verify-linux, verify-macos: a dropped deny, never accepted
  Unknown,          // no such rule (docs/lints.md, compiler/lint/lint_catalog)
};
Acceptance acceptance_of(const std::string& id);

// The IDs acceptance_of calls Acceptable, in order (for messages and docs).
const std::vector<std::string>& acceptable_lints();

// The lint ID of syscall-rule findings (compiler/lint/syscall_lint), as `check` reports them.
inline constexpr const char* kSyscallLintId = "ZP100";

// The paths ZP003 keeps out of writable roots (relative to $HOME): what a shell,
// a session, git or an editor runs at start-up, and credential stores. docs/lints.md
// lists the same.
const std::vector<std::string>& sensitive_path_list();

}  // namespace zpolicy::compiler
