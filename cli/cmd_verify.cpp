#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/options.hpp"
#include "compiler/pipeline.hpp"
#include "compiler/analyzer/verify.hpp"

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

  ir::Diagnostics diags;
  auto target = compiler::parse_target(vm["target"].as<std::string>());
  if (!target) diags.error({"<command line>"}, "invalid --target (expected linux or macos)");
  auto req = load_request(vm, diags);
  std::optional<ir::Resolved> resolved;
  if (req && !diags.has_errors())
    resolved = compiler::resolve_for_target(req->policy, *target, req->mode, req->host, diags);
  if (!resolved || diags.has_errors()) {
    print_diagnostics(diags);
    return kExitUsage;
  }
  // Every artifact file of the target is read as it is; a missing one is a finding.
  std::vector<compiler::Artifact> arts;
  const std::string dir = vm["dir"].as<std::string>();
  for (const auto& name : compiler::artifact_names(*target)) {
    std::ifstream in(std::filesystem::path(dir) / name, std::ios::binary);
    if (!in) continue;
    std::ostringstream s;
    s << in.rdbuf();
    arts.push_back({name, s.str(), name.ends_with(".bpf")});
  }
  auto findings = compiler::verify_artifacts(*resolved, *target, arts);
  if (!findings.empty()) {
    for (const auto& f : findings) std::cerr << f.str() << "\n";
    std::cerr << "zpolicy: verification failed: " << findings.size() << " finding"
              << (findings.size() == 1 ? "" : "s") << "\n";
    return kExitVerify;
  }
  std::cout << "verified: " << dir << " (" << compiler::to_string(*target)
            << ") does what the policy says\n";
  return kExitOk;
}

}  // namespace zpolicy::cli
