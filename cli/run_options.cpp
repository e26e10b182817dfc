#include "cli/run_options.hpp"

#include <algorithm>

namespace zpolicy::cli {
namespace {

// The first word that is neither an option nor an option's value: where a command
// written without "--" starts. Every option of run and plan but --help takes a value.
size_t first_command_word(const Args& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help" || a.find('=') != std::string::npos) continue;
    if (a.starts_with("-")) {
      ++i;
      continue;
    }
    return i;
  }
  return args.size();
}

}  // namespace

bool parse_run_options(const Args& args, const std::string& command_name,
                       const std::string& usage, po::options_description& opts,
                       po::variables_map& vm, RunRequest& request, bool& help_shown) {
  // Everything after "--" is the command, never an option of ours.
  auto dashdash = std::find(args.begin(), args.end(), "--");
  if (dashdash == args.end()) {
    const size_t word = first_command_word(args);
    if (word < args.size()) {
      std::string line = "zpolicy " + command_name;
      for (size_t i = 0; i < args.size(); ++i)
        line += (i == word ? " -- " : " ") + args[i];
      std::cerr << "zpolicy: " << command_name << ": the command goes after '--'; did you mean `"
                << line << "`?\nusage: " << usage << "\n";
      return false;
    }
  }
  Args ours(args.begin(), dashdash);
  opts.add_options()("policy", po::value<std::string>(), "policy file (default: built-in)")(
      "mode", po::value<std::string>(), "narrow the policy's mode")(
      "workspace", po::value<std::string>(), "the workspace (default: current directory)")(
      "timeout", po::value<std::string>(),
      "kill the whole sandbox after this long (500ms, 120s, 10m, 2h; exit 124); may only "
      "shorten the policy's timeout")(
      "env", po::value<std::vector<std::string>>()->composing(),
      "NAME=VALUE sets, NAME keeps the caller's NAME for this run (repeatable)")(
      "accept", po::value<std::vector<std::string>>()->composing(),
      "run despite this error-level lint (ZP003, ZP004, ZP005 or ZP013; repeatable); a verifier "
      "finding is never accepted");
  if (!parse_options(ours, usage, opts, {}, vm, help_shown)) return false;
  if (help_shown) return true;
  if (dashdash != args.end()) request.command.assign(dashdash + 1, args.end());
  if (vm.count("policy")) request.policy_file = vm["policy"].as<std::string>();
  if (vm.count("mode")) request.mode = vm["mode"].as<std::string>();
  if (vm.count("workspace")) request.workspace = vm["workspace"].as<std::string>();
  if (vm.count("accept")) request.accept = vm["accept"].as<std::vector<std::string>>();
  if (vm.count("timeout")) request.timeout = vm["timeout"].as<std::string>();
  if (vm.count("env")) request.env = vm["env"].as<std::vector<std::string>>();
  return true;
}

}  // namespace zpolicy::cli
