#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"

namespace zpolicy::compiler {

// The facts an OCI profile's conditional entries are evaluated against. A confined run
// drops every capability (bwrap --cap-drop ALL) and runs x86_64 code, hence the defaults.
struct OciImportOptions {
  std::string arch = "amd64";             // Go spelling, as in includes/excludes.arches
  std::vector<std::string> capabilities;  // "CAP_SYS_ADMIN", ...
};

// Reads an OCI / Docker seccomp profile (JSON) into the policy's syscall section.
// * defaultAction ALLOW gives a deny-list, anything else an allow-list whose default is
//   that action; SCMP_ACT_ERRNO uses errnoRet / defaultErrnoRet (EPERM when absent).
// * An entry applies when every capability in includes.caps is held, includes.arches
//   names `arch`, no excludes.caps capability is held and excludes.arches does not name
//   `arch`; includes.minKernel is taken as met (the runner requires a recent kernel).
//   Entries that do not apply are dropped.
// * args become conjunctive conditions; SCMP_CMP_MASKED_EQ takes `value` as the mask
//   and `valueTwo` as the expected value, like libseccomp.
// * architectures / archMap are checked for form only: the emitted filter always
//   enforces x86_64 and answers every other ABI with the policy's foreign-ABI action.
// * Actions without an IR equivalent (TRAP, TRACE, LOG, NOTIFY), unknown keys, wrong
//   types and duplicate keys are errors with file:line:col; then nothing is returned.
std::optional<ir::SyscallSpec> import_oci_seccomp(std::string_view json_text,
                                                  const std::string& file,
                                                  ir::Diagnostics& diags,
                                                  const OciImportOptions& options = {});

}  // namespace zpolicy::compiler
