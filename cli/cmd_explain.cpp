#include "cli/options.hpp"

namespace zpolicy::cli {

int cmd_explain(const Args& args) {
  const std::string usage =
      "zpolicy explain POLICY PATH [--op read|write|create|delete] [--target linux|macos] "
      "[--mode M] [--workspace DIR]\n       zpolicy explain POLICY --connect HOST:PORT [--mode M]";
  po::options_description opts("explain options");
  opts.add_options()("policy", po::value<std::string>()->required(), "policy file")(
      "connect", po::value<std::string>(), "explain a network destination HOST:PORT instead")(
      "path", po::value<std::string>(),
      "path to explain: absolute, or ${WORKSPACE}/... (portable)")(
      "op", po::value<std::string>()->default_value("write"), "read, write, create or delete")(
      "target", po::value<std::string>(), "linux or macos (default: both)")(
      "mode", po::value<std::string>(), "narrow the policy's mode")(
      "workspace", po::value<std::string>(), "bind the policy to this workspace");
  po::positional_options_description pos;
  pos.add("policy", 1).add("path", 1);
  po::variables_map vm;
  bool help = false;
  if (!parse_options(args, usage, opts, pos, vm, help)) return kExitUsage;
  if (help) return kExitOk;

  if (!vm.count("connect") && !vm.count("path")) {
    std::cerr << "zpolicy: missing the PATH argument\nusage: " << usage << "\n";
    return kExitUsage;
  }
  if (vm.count("connect") && vm.count("path")) {
    std::cerr << "zpolicy: give either PATH or --connect HOST:PORT\nusage: " << usage << "\n";
    return kExitUsage;
  }
  const auto e =
      vm.count("connect")
          ? explain_connect(request_of(vm), vm["connect"].as<std::string>())
          : explain(request_of(vm), vm["path"].as<std::string>(), vm["op"].as<std::string>(),
                    vm.count("target") ? std::optional(vm["target"].as<std::string>())
                                       : std::nullopt);
  if (!e.answers.empty()) {
    std::cout << e.query << "\n";
    for (const auto& n : e.notes) std::cout << "  note:   " << n << "\n";
  }
  for (const auto& a : e.answers) {
    if (!a.policy.empty()) std::cout << "  policy: " << a.policy << "\n";
    std::cout << "  " << to_string(a.target) << ":  " << a.artifact << "\n";
    for (const auto& t : a.trace) std::cout << "          " << t << "\n";
  }
  print_diagnostics(e.diagnostics);
  return e.exit_code;
}

}  // namespace zpolicy::cli
