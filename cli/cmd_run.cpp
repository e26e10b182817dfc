#include <algorithm>
#include "cli/options.hpp"
#include "runner/run.hpp"

namespace zpolicy::cli {

int cmd_run(const Args& args) {
  const std::string usage =
      "zpolicy run [--policy POLICY] [--mode M] [--workspace DIR] [--timeout S] [--accept LINT]... "
      "-- CMD [ARG...]";
  // Everything after "--" is the command, never an option of ours.
  auto dashdash = std::find(args.begin(), args.end(), "--");
  Args ours(args.begin(), dashdash);
  po::options_description opts("run options");
  opts.add_options()("policy", po::value<std::string>(), "policy file (default: built-in)")(
      "mode", po::value<std::string>(), "narrow the policy's mode")(
      "workspace", po::value<std::string>(), "the workspace (default: current directory)")(
      "timeout", po::value<double>(), "kill the whole sandbox after S seconds (exit 124)")(
      "accept", po::value<std::vector<std::string>>()->composing(),
      "run despite this error-level lint (ZP003, ZP004, ZP005 or ZP013; repeatable); a verifier "
      "finding is never accepted");
  po::variables_map vm;
  bool help = false;
  if (!parse_options(ours, usage, opts, {}, vm, help)) return kExitUsage;
  if (help) return kExitOk;
  runner::RunRequest req;
  if (dashdash != args.end()) req.command.assign(dashdash + 1, args.end());
  ir::Diagnostics diags;
  req.mode = mode_option(vm, diags);
  if (vm.count("policy")) req.policy_path = vm["policy"].as<std::string>();
  if (vm.count("workspace")) req.workspace = vm["workspace"].as<std::string>();
  if (vm.count("accept")) req.accept = vm["accept"].as<std::vector<std::string>>();
  if (vm.count("timeout")) {
    double s = vm["timeout"].as<double>();
    if (!(s > 0 && s <= 7 * 24 * 3600))
      diags.error({"<command line>"}, "--timeout must be more than 0 and at most 7 days");
    else
      req.timeout = std::chrono::milliseconds(static_cast<long long>(s * 1000));
  }
  if (diags.has_errors()) {
    print_diagnostics(diags);
    return kExitUsage;
  }
  return runner::run(req, std::cerr);
}

}  // namespace zpolicy::cli
