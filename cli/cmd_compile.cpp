#include "cli/artifact_files.hpp"
#include "zpolicy/json.hpp"
#include "cli/options.hpp"

namespace zpolicy::cli {

int cmd_compile(const Args& args) {
  const std::string usage =
      "zpolicy compile POLICY --target linux|macos [--mode M] [--workspace DIR] [--out DIR] "
      "[--emit ARTIFACT] [--format text|json]";
  po::options_description opts("compile options");
  opts.add_options()("policy", po::value<std::string>()->required(), "policy file")(
      "target", po::value<std::string>()->required(), "linux or macos")(
      "mode", po::value<std::string>(), "narrow the policy's mode")(
      "workspace", po::value<std::string>(),
      "bind ${WORKSPACE} etc. to this host (default: portable, symbolic output)")(
      "out", po::value<std::string>(), "write the artifacts into DIR")(
      "emit", po::value<std::string>(), "print one artifact to stdout")(
      "format", po::value<std::string>()->default_value("text"), "text or json");
  po::positional_options_description pos;
  pos.add("policy", 1);
  po::variables_map vm;
  bool help = false;
  if (!parse_options(args, usage, opts, pos, vm, help)) return kExitUsage;
  if (help) return kExitOk;

  std::vector<Diagnostic> usage_errors;
  auto target = parse_target(vm["target"].as<std::string>());
  if (!target) usage_errors.push_back(usage_error("invalid --target (expected linux or macos)"));
  const std::string format = vm["format"].as<std::string>();
  if (format != "text" && format != "json")
    usage_errors.push_back(usage_error("invalid --format (expected text or json)"));
  if (vm.count("emit") && vm.count("out"))
    usage_errors.push_back(
        usage_error("--emit prints one artifact and --out writes them all; use one"));
  const Request request = request_of(vm);
  if (!usage_errors.empty()) {
    // The policy's own errors too, so that one try shows everything to fix.
    auto checked = validate(request);
    usage_errors.insert(usage_errors.end(), checked.diagnostics.begin(), checked.diagnostics.end());
    print_diagnostics(usage_errors);
    return kExitUsage;
  }
  const auto compiled = compile(request, *target);
  if (compiled.exit_code == kExitVerify) {
    print_findings(compiled.diagnostics, "; nothing was written");
    return kExitVerify;
  }
  if (!compiled.ok()) {
    print_diagnostics(compiled.diagnostics);
    return compiled.exit_code;
  }
  const auto& arts = compiled.artifacts;

  if (vm.count("emit")) {
    auto name = vm["emit"].as<std::string>();
    for (const auto& a : arts)
      if (a.name == name) {
        std::cout.write(a.content.data(), static_cast<std::streamsize>(a.content.size()));
        return std::cout.flush() ? kExitOk : kExitInternal;
      }
    std::cerr << "zpolicy: no artifact '" << name << "' for target " << to_string(*target)
              << " (one of:";
    for (const auto& a : arts) std::cerr << " " << a.name;
    std::cerr << ")\n";
    return kExitUsage;
  }
  if (vm.count("out")) {
    std::string error;
    if (write_artifacts(vm["out"].as<std::string>(), arts, error)) return kExitOk;
    std::cerr << "zpolicy: " << error << "\n";
    return kExitInternal;
  }
  if (format == "json") {
    std::cout << artifacts_json(to_string(*target), arts);
    return kExitOk;
  }
  for (const auto& a : arts) {
    if (a.binary) continue;
    std::cout << "==> " << a.name << " <==\n" << a.content;
  }
  return kExitOk;
}

}  // namespace zpolicy::cli
