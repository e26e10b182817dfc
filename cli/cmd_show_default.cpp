#include "cli/options.hpp"
#include "compiler/frontend/default_policy.hpp"

namespace zpolicy::cli {

int cmd_show_default(const Args& args) {
  const std::string usage = "zpolicy show-default [--mode M]";
  po::options_description opts("show-default options");
  opts.add_options()("mode", po::value<std::string>(), "print the default narrowed to mode M");
  po::variables_map vm;
  bool help = false;
  if (!parse_options(args, usage, opts, {}, vm, help)) return kExitUsage;
  if (help) return kExitOk;
  ir::Diagnostics diags;
  auto mode = mode_option(vm, diags);
  auto policy = compiler::default_policy();
  if (mode && !ir::narrower_or_equal(*mode, policy.mode.value))
    diags.error({"<command line>"}, std::string("--mode ") + ir::to_string(*mode) +
                                        " is wider than the default policy's workspace-write");
  if (diags.has_errors()) {
    print_diagnostics(diags);
    return kExitUsage;
  }
  std::cout << compiler::default_policy_text(mode.value_or(policy.mode.value));
  return kExitOk;
}

}  // namespace zpolicy::cli
