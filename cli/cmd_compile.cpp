#include "cli/artifact_files.hpp"
#include "cli/json.hpp"
#include "cli/options.hpp"
#include "compiler/pipeline.hpp"

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

  ir::Diagnostics diags;
  auto target = compiler::parse_target(vm["target"].as<std::string>());
  if (!target) diags.error({"<command line>"}, "invalid --target (expected linux or macos)");
  const std::string format = vm["format"].as<std::string>();
  if (format != "text" && format != "json")
    diags.error({"<command line>"}, "invalid --format (expected text or json)");
  if (vm.count("emit") && vm.count("out"))
    diags.error({"<command line>"}, "--emit prints one artifact and --out writes them all; use one");
  auto req = load_request(vm, diags);
  std::optional<compiler::Compiled> compiled;
  if (req && !diags.has_errors())
    compiled = compiler::compile(req->policy, *target, req->mode, req->host, diags);
  if (!compiled || diags.has_errors()) {
    print_diagnostics(diags);
    return kExitUsage;
  }
  if (!compiled->findings.empty()) {
    print_findings(compiled->findings);
    return kExitVerify;
  }
  const auto* arts = &compiled->artifacts;

  if (vm.count("emit")) {
    auto name = vm["emit"].as<std::string>();
    for (const auto& a : *arts)
      if (a.name == name) {
        std::cout.write(a.content.data(), static_cast<std::streamsize>(a.content.size()));
        return std::cout.flush() ? kExitOk : kExitInternal;
      }
    std::cerr << "zpolicy: no artifact '" << name << "' for target " << compiler::to_string(*target)
              << " (one of:";
    for (const auto& a : *arts) std::cerr << " " << a.name;
    std::cerr << ")\n";
    return kExitUsage;
  }
  if (vm.count("out")) {
    std::string error;
    if (write_artifacts(vm["out"].as<std::string>(), *arts, error)) return kExitOk;
    std::cerr << "zpolicy: " << error << "\n";
    return kExitInternal;
  }
  if (format == "json") {
    std::cout << artifacts_json(compiler::to_string(*target), *arts);
    return kExitOk;
  }
  for (const auto& a : *arts) {
    if (a.binary) continue;
    std::cout << "==> " << a.name << " <==\n" << a.content;
  }
  return kExitOk;
}

}  // namespace zpolicy::cli
