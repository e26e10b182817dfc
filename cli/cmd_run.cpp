#include "cli/run_options.hpp"

namespace zpolicy::cli {

int cmd_run(const Args& args) {
  const std::string usage =
      "zpolicy run [--policy POLICY] [--mode M] [--workspace DIR] [--timeout T] [--env NAME[=V]]... "
      "[--accept LINT]... "
      "-- CMD [ARG...]";
  po::options_description opts("run options");
  po::variables_map vm;
  RunRequest req;
  bool help = false;
  if (!parse_run_options(args, "run", usage, opts, vm, req, help)) return kExitUsage;
  if (help) return kExitOk;
  return run(req, std::cerr);
}

}  // namespace zpolicy::cli
