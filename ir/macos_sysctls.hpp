#pragma once

#include <array>
#include <string_view>

namespace zpolicy::ir {

// The sysctls a confined macOS profile may read (docs/macos.md, "Process primitives"):
// sizes, CPU features and OS versions that libc, language runtimes and build tools read,
// and a process's own entry (`kern.proc.pid.`). They are a decision of the design, not
// of a policy, so the one list serves both sides: the SBPL emitter grants exactly these
// names and prefixes, and the analyzer accepts exactly these and refuses any other
// (`kern.proc.all` lists the host's processes, `kern.procargs2` hands over another
// process's arguments and environment). Sorted; the emitter writes them in this order.
inline constexpr std::array<std::string_view, 27> kMacosPlatformSysctls = {
    "hw.activecpu",
    "hw.byteorder",
    "hw.cachelinesize",
    "hw.cpufamily",
    "hw.cputype",
    "hw.l1dcachesize",
    "hw.l2cachesize",
    "hw.logicalcpu",
    "hw.logicalcpu_max",
    "hw.machine",
    "hw.memsize",
    "hw.model",
    "hw.ncpu",
    "hw.pagesize",
    "hw.physicalcpu",
    "hw.physicalcpu_max",
    "kern.argmax",
    "kern.hostname",
    "kern.maxfilesperproc",
    "kern.osproductversion",
    "kern.osrelease",
    "kern.ostype",
    "kern.osversion",
    "kern.version",
    "machdep.cpu.brand_string",
    "sysctl.proc_cputype",
    "vm.loadavg",
};

// The prefixes of the same grant (`(sysctl-name-prefix ...)`).
inline constexpr std::array<std::string_view, 3> kMacosPlatformSysctlPrefixes = {
    "hw.optional.",
    "hw.perflevel",
    "kern.proc.pid.",
};

}  // namespace zpolicy::ir
