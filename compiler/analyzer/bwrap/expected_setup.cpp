#include "compiler/analyzer/bwrap/expected_setup.hpp"

namespace zpolicy::compiler {
namespace {

std::optional<ExpectedObject> object_of(const BwrapOp& op, const PathTable& paths) {
  ExpectedObject o;
  o.dest = paths.path(op.dest).str();
  o.line = op.line;
  switch (op.kind) {
    case BwrapOpKind::Bind:
    case BwrapOpKind::RoBind:
    case BwrapOpKind::DevBind:
      o.kind = ExpectedObject::Kind::Bind;
      o.source_fd = op.source_fd;
      if (op.source) o.source = paths.path(*op.source).str();
      o.read_only = op.kind == BwrapOpKind::RoBind;
      return o;
    case BwrapOpKind::Tmpfs:
      o.kind = ExpectedObject::Kind::Tmpfs;
      return o;
    case BwrapOpKind::Dev:
      o.kind = ExpectedObject::Kind::Dev;
      return o;
    case BwrapOpKind::Proc:
      o.kind = ExpectedObject::Kind::Proc;
      return o;
    case BwrapOpKind::Dir:
      o.kind = ExpectedObject::Kind::Directory;
      return o;
    case BwrapOpKind::Symlink:
      o.kind = ExpectedObject::Kind::Symlink;
      o.link_target = std::string(op.link_target);
      return o;
    case BwrapOpKind::RemountRo:
    case BwrapOpKind::Chmod:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(ExpectedObject::Kind k) {
  switch (k) {
    case ExpectedObject::Kind::Bind:
      return "bind";
    case ExpectedObject::Kind::Tmpfs:
      return "tmpfs";
    case ExpectedObject::Kind::Dev:
      return "dev";
    case ExpectedObject::Kind::Proc:
      return "proc";
    case ExpectedObject::Kind::Directory:
      return "directory";
    case ExpectedObject::Kind::Symlink:
      return "symlink";
  }
  return "?";
}

std::vector<ExpectedObject> expected_setup(const BwrapArgv& argv) {
  const PathTable& paths = *argv.paths;
  // Walked backwards, so that what a later operation does to a destination is known
  // when an earlier one is met: a later mount at or above it hides it, a later
  // --remount-ro at exactly it makes the mount there read-only. Looked up by the
  // destination's ancestors, not by a scan of every later mount, which nested
  // repositories make quadratic (R17-6).
  std::vector<ExpectedObject> out;
  PathMap<bool> later_mounts(paths);
  PathMap<bool> later_remounts(paths);
  for (auto it = argv.ops.rbegin(); it != argv.ops.rend(); ++it) {
    const BwrapOp& op = *it;
    if (op.kind == BwrapOpKind::RemountRo) {
      later_remounts.insert(op.dest, true);
      continue;
    }
    const bool hidden = later_mounts.deepest_containing(op.dest) != nullptr;
    if (is_mount(op.kind)) later_mounts.insert(op.dest, true);
    if (hidden) continue;
    auto o = object_of(op, paths);
    if (!o) continue;
    if (is_mount(op.kind)) o->read_only |= later_remounts.find(op.dest) != nullptr;
    out.push_back(std::move(*o));
  }
  return {out.rbegin(), out.rend()};
}

}  // namespace zpolicy::compiler
