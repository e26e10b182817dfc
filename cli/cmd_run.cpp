#include <algorithm>
#include "cli/options.hpp"

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
  RunRequest req;
  if (dashdash != args.end()) req.command.assign(dashdash + 1, args.end());
  if (vm.count("policy")) req.policy_file = vm["policy"].as<std::string>();
  if (vm.count("mode")) req.mode = vm["mode"].as<std::string>();
  if (vm.count("workspace")) req.workspace = vm["workspace"].as<std::string>();
  if (vm.count("accept")) req.accept = vm["accept"].as<std::vector<std::string>>();
  if (vm.count("timeout")) req.timeout_seconds = vm["timeout"].as<double>();
  return run(req, std::cerr);
}

}  // namespace zpolicy::cli
