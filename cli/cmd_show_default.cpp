#include "cli/options.hpp"

namespace zpolicy::cli {

int cmd_show_default(const Args& args) {
  const std::string usage = "zpolicy show-default [--mode M]";
  po::options_description opts("show-default options");
  opts.add_options()("mode", po::value<std::string>(), "print the default narrowed to mode M");
  po::variables_map vm;
  bool help = false;
  if (!parse_options(args, usage, opts, {}, vm, help)) return kExitUsage;
  if (help) return kExitOk;
  auto shown = default_policy_text(vm.count("mode") ? std::optional(vm["mode"].as<std::string>())
                                                    : std::nullopt);
  if (shown.exit_code != kExitOk) {
    print_diagnostics(shown.diagnostics);
    return shown.exit_code;
  }
  std::cout << shown.text;
  return kExitOk;
}

}  // namespace zpolicy::cli
