#include "compiler/analyzer/sbpl/sbpl_ancestor_bytes.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace zpolicy::compiler {

std::optional<ir::Diagnostic> too_many_ancestor_bytes(const ir::Resolved& policy) {
  if (policy.mode != ir::Mode::WorkspaceWrite) return std::nullopt;
  std::vector<const ir::ResolvedPath*> guarded;
  for (const auto* group : {&policy.protect, &policy.deny})
    for (const auto& p : *group) guarded.push_back(&p);
  // In byte order the paths below a directory D ("D/...") form one run, so a directory
  // above a path is new exactly when the previous path does not share "D/".
  std::sort(guarded.begin(), guarded.end(),
            [](const auto* a, const auto* b) { return a->path < b->path; });
  size_t total = 0;
  const std::string* previous = nullptr;
  for (const auto* p : guarded) {
    const std::string& path = p->path;
    size_t shared = 0;
    if (previous)
      shared = std::mismatch(path.begin(), path.end(), previous->begin(), previous->end()).first -
               path.begin();
    for (size_t slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1))
      if (slash >= shared) total += slash;  // the directory path.substr(0, slash)
    previous = &path;
    if (total > kSbplMaxArgumentBytes)
      return ir::finding("macos", "malformed-artifact", p->loc,
                         "path " + path.substr(0, 64) + (path.size() > 64 ? "..." : ""),
                         "at most " + std::to_string(kSbplMaxArgumentBytes) +
                             " bytes of directories above protected paths and deny roots "
                             "(the profile names each; sandbox-exec takes them as arguments, "
                             "macOS ARG_MAX)",
                         "more from this path on");
  }
  return std::nullopt;
}

}  // namespace zpolicy::compiler
