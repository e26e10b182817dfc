#include "cli/run_options.hpp"

namespace zpolicy::cli {

int cmd_run(const Args& args) {
  const std::string usage =
      "zpolicy run [--policy POLICY] [--mode M] [--workspace DIR] [--timeout T] [--env "
      "NAME[=V]]... "
      "[--accept LINT]... [--status-file FILE] "
      "-- CMD [ARG...]";
  po::options_description opts("run options");
  opts.add_options()("status-file", po::value<std::string>(),
                     "when the run ends, write its status here as JSON: the exit code and each "
                     "destination the network proxy refused (docs/run.md \"Run status\")");
  po::variables_map vm;
  RunRequest req;
  bool help = false;
  if (!parse_run_options(args, "run", usage, opts, vm, req, help)) return kExitUsage;
  if (help) return kExitOk;
  if (vm.count("status-file")) req.status_file = vm["status-file"].as<std::string>();
  return run_with_status(req, std::cerr).exit_code;
}

}  // namespace zpolicy::cli
