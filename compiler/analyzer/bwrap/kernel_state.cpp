#include "compiler/analyzer/bwrap/kernel_state.hpp"

#include "compiler/analyzer/intent.hpp"

namespace zpolicy::compiler {
namespace {

// Host paths that stand for the kernel's own state: the roots, and one file deep in
// each tree the sandbox could reach through a bind of an ancestor.
constexpr const char* kHostKernelPaths[] = {
    "/proc",
    "/proc/sys/kernel/core_pattern",
    "/proc/sysrq-trigger",
    "/sys",
    "/sys/kernel/mm/transparent_hugepage/enabled",
    "/sys/fs/cgroup/cgroup.procs",
};

ir::Diagnostic finding(std::string kind, std::string probe, std::string expected,
                       std::string actual, const std::vector<std::string>& assumptions) {
  return ir::finding("linux", std::move(kind), ir::SourceLoc{ir::kBuiltinFile, 0, 0},
                     std::move(probe), std::move(expected), std::move(actual), assumptions);
}

}  // namespace

void check_kernel_state(const ir::Resolved& intent, const BwrapArgv& argv, MountTable& table,
                        const std::vector<std::string>& assumptions,
                        std::vector<ir::Diagnostic>& out) {
  PathTable& paths = table.paths();
  for (const BwrapOp& op : argv.ops) {
    if (op.kind != BwrapOpKind::Proc) continue;
    const MountTable::Mount* m = table.mount_at(paths.path(op.dest));
    if (!m || m->kind != MountTable::MountKind::Proc || m->read_only) continue;
    const std::string at = paths.path(op.dest).str();
    ir::Diagnostic f = finding("missing-hardening", "--remount-ro " + at,
                               "procfs at " + at +
                                   " read-only: a root-started sandbox writes "
                                   "/proc/sys and /proc/sysrq-trigger of the host kernel otherwise",
                               "a writable procfs (bwrap.args:" + std::to_string(op.line) + ": " +
                                   std::string(op.text) + ")",
                               assumptions);
    out.push_back(std::move(f));
  }
  for (const char* host : kHostKernelPaths) {
    const auto path = *SymbolicPath::parse(host);
    AccessResult r = table.host_access(path, FsOp::Write, true);
    if (r.outcome != Outcome::Host) continue;
    ir::Diagnostic f =
        finding("dropped-deny", std::string("write ") + host,
                "deny (host kernel state, invariant 10)", to_string(r.outcome), assumptions);
    // A writable root over or under the kernel path is the policy line to change.
    for (const auto& w : intent.write)
      if (auto wp = SymbolicPath::parse(w.path, path_spelling(intent));
          wp && (wp->contains(path) || path.contains(*wp))) {
        f.loc = w.loc;
        f.trace.insert(f.trace.begin(), "writable root " + w.path + " overlaps " + host);
        break;
      }
    f.trace.insert(f.trace.end(), r.trace.begin(), r.trace.end());
    out.push_back(std::move(f));
  }
}

}  // namespace zpolicy::compiler
