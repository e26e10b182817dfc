// `run`: the command-line form of a run request checked here, then the runner.
#include "ir/diagnostic.hpp"
#include "runner/run.hpp"
#include "zpolicy/zpolicy.hpp"

namespace zpolicy {

int run(const RunRequest& request, std::ostream& messages) {
  ir::Diagnostics diags;
  runner::RunRequest req;
  if (request.mode) {
    req.mode = ir::parse_mode(*request.mode);
    if (!req.mode)
      diags.error({"<command line>"}, "invalid --mode '" + *request.mode +
                                          "' (expected read-only, workspace-write or "
                                          "danger-full-access)");
  }
  req.policy_path = request.policy_file;
  req.workspace = request.workspace;
  req.accept = request.accept;
  req.command = request.command;
  if (request.timeout_seconds) {
    const double s = *request.timeout_seconds;
    if (!(s > 0 && s <= 7 * 24 * 3600))
      diags.error({"<command line>"}, "--timeout must be more than 0 and at most 7 days");
    else
      req.timeout = std::chrono::milliseconds(static_cast<long long>(s * 1000));
  }
  if (diags.has_errors()) {
    messages << diags.str();
    return kExitUsage;
  }
  return runner::run(req, messages);
}

}  // namespace zpolicy
