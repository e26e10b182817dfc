#include <algorithm>

#include "cli/options.hpp"

namespace zpolicy::cli {

int cmd_cleanup(const Args& args) {
  const std::string usage = "zpolicy cleanup [DIR]";
  po::options_description opts("cleanup options");
  opts.add_options()("dir", po::value<std::string>(),
                     "only placeholders in this directory (default: every one of this user's)");
  po::positional_options_description pos;
  pos.add("dir", 1);
  po::variables_map vm;
  bool help = false;
  if (!parse_options(args, usage, opts, pos, vm, help)) return kExitUsage;
  if (help) return kExitOk;
  const auto report =
      cleanup(vm.count("dir") ? std::optional(vm["dir"].as<std::string>()) : std::nullopt);
  print_diagnostics(report.diagnostics);
  for (const auto& p : report.placeholders)
    std::cout << p.action << std::string(8 - std::min<size_t>(p.action.size(), 7), ' ') << p.path
              << (p.reason.empty() ? "" : ": " + p.reason) << "\n";
  if (report.exit_code == kExitOk && report.placeholders.empty())
    std::cout << "no placeholders left by runs\n";
  return report.exit_code;
}

}  // namespace zpolicy::cli
