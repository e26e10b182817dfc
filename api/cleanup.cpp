// `cleanup`: the runner's reconciliation of dead runs, on request and limited to a directory.
#include <climits>
#include <cstdlib>
#include <cstring>

#include "zpolicy/zpolicy.hpp"

#if defined(__linux__)
#include "runner/stale_placeholders.hpp"
#include "ir/path.hpp"
#endif

namespace zpolicy {

CleanupReport cleanup(const std::optional<std::string>& dir) {
  CleanupReport out;
#if defined(__linux__)
  std::optional<std::string> within;
  if (dir) {
    char buf[PATH_MAX];
    if (!realpath(dir->c_str(), buf)) {
      out.exit_code = kExitUsage;
      out.diagnostics.push_back({"", Severity::Error, *dir, 0, 0,
                                 std::string("cannot resolve the directory: ") + std::strerror(errno),
                                 {}});
      return out;
    }
    within = buf;
  }
  std::string error;
  const auto done = runner::remove_stale_placeholders(within, error);
  if (!done) {
    out.exit_code = kExitInternal;
    out.diagnostics.push_back({"", Severity::Error, "zpolicy", 0, 0, error, {}});
    return out;
  }
  if (!done->host_quiet) {
    out.exit_code = kExitIncomplete;
    out.diagnostics.push_back(
        {"", Severity::Error, "zpolicy", 0, 0,
         done->why_not + "; nothing was removed: run cleanup again when no run is live", {}});
    for (const auto& p : runner::stale_placeholders())
      if (!within || ir::path_within(*within, p))
        out.placeholders.push_back({"left", p, "cleanup acts only while no run is live"});
    return out;
  }
  for (const auto& [path, removal] : done->placeholders) {
    switch (removal) {
      case runner::Removal::Removed:
        out.placeholders.push_back({"removed", path, ""});
        break;
      case runner::Removal::Gone:
        out.placeholders.push_back({"gone", path, ""});
        break;
      default:
        out.placeholders.push_back({"kept", path, runner::to_string(removal)});
    }
  }
#else
  static_cast<void>(dir);  // a macOS run makes no placeholders
#endif
  return out;
}

}  // namespace zpolicy
