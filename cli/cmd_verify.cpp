#include "cli/artifact_files.hpp"
#include "cli/options.hpp"

namespace zpolicy::cli {

int cmd_verify(const Args& args) {
  const std::string usage =
      "zpolicy verify POLICY DIR --target linux|macos [--mode M] [--workspace DIR]";
  po::options_description opts("verify options");
  opts.add_options()("policy", po::value<std::string>()->required(), "policy file")(
      "dir", po::value<std::string>()->required(), "directory holding the compiled artifacts")(
      "target", po::value<std::string>()->required(), "linux or macos")(
      "mode", po::value<std::string>(), "the mode the artifacts were compiled for")(
      "workspace", po::value<std::string>(), "the artifacts are bound to this workspace");
  po::positional_options_description pos;
  pos.add("policy", 1).add("dir", 1);
  po::variables_map vm;
  bool help = false;
  if (!parse_options(args, usage, opts, pos, vm, help)) return kExitUsage;
  if (help) return kExitOk;

  const Request request = request_of(vm);
  auto target = parse_target(vm["target"].as<std::string>());
  if (!target) {
    std::vector<Diagnostic> diags = {usage_error("invalid --target (expected linux or macos)")};
    auto checked = validate(request);
    diags.insert(diags.end(), checked.diagnostics.begin(), checked.diagnostics.end());
    print_diagnostics(diags);
    return kExitUsage;
  }
  // Every artifact file of the target is read as it is; a missing one is a finding.
  const std::string dir = vm["dir"].as<std::string>();
  std::vector<std::string> refused;
  const auto arts = read_artifacts(dir, *target, refused);
  if (!refused.empty()) {
    for (const auto& r : refused) std::cerr << "zpolicy: " << r << "\n";
    std::cerr << "zpolicy: verification failed: " << refused.size()
              << " artifact file(s) refused; nothing was verified\n";
    return kExitVerify;
  }
  const auto verified = verify(request, *target, arts);
  if (verified.exit_code == kExitVerify) {
    print_findings(verified.diagnostics, "");
    return kExitVerify;
  }
  if (!verified.ok()) {
    print_diagnostics(verified.diagnostics);
    return verified.exit_code;
  }
  std::cout << "verified: " << dir << " (" << to_string(*target)
            << ") does what the policy says\n";
  return kExitOk;
}

}  // namespace zpolicy::cli
