#pragma once

#include <string>
#include <vector>

#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/bwrap/mount_table.hpp"
#include "ir/diagnostic.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// Invariant 10, host kernel state. A sandbox started by root keeps kuid 0 (its user
// namespace maps 0 to 0), and procfs and sysfs files that check only their owner
// (/proc/sys/*, /proc/sysrq-trigger, /sys/kernel/*, cgroupfs) accept its writes
// whatever capabilities it lacks. The policy never names these paths, so the probes
// derived from it do not reach them: this check asks for them by name. It holds when
// every procfs the argv mounts is remounted read-only and no host /proc or /sys object
// is writable at any path the sandbox can reach it by (its own, or an alias of a bind
// that carries it, such as a writable bind of "/"). A finding names the writable root
// that overlaps the kernel path, when the policy asked for one.
void check_kernel_state(const ir::Resolved& intent, const BwrapArgv& argv, MountTable& table,
                        const std::vector<std::string>& assumptions,
                        std::vector<ir::Diagnostic>& out);

}  // namespace zpolicy::compiler
