#pragma once

// The fixed, trusted locations of the sandbox backends (DESIGN.md "Fail-closed"): never
// PATH, never the workspace. The run plan names them, the runner checks and starts them,
// and the lints keep them out of writable roots.
namespace zpolicy::compiler {

inline constexpr const char* kBwrapPath = "/usr/bin/bwrap";
inline constexpr const char* kSandboxExecPath = "/usr/bin/sandbox-exec";

}  // namespace zpolicy::compiler
