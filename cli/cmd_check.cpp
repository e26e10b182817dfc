#include <climits>
#include <cstdlib>
#include <unistd.h>

#include "cli/json.hpp"
#include "cli/options.hpp"
#include "compiler/pipeline.hpp"
#include "compiler/check.hpp"

namespace zpolicy::cli {
namespace {

using Result = compiler::CheckItem;

std::optional<std::string> canonical(const std::string& p) {
  char buf[PATH_MAX];
  if (!realpath(p.c_str(), buf)) return std::nullopt;
  return std::string(buf);
}

std::string text_output(const std::vector<Result>& results) {
  std::string out;
  for (const auto& r : results) {
    out += r.loc.str() + ": " + ir::to_string(r.severity) + ": " + r.message + " [" + r.rule_id + "]\n";
    for (const auto& d : r.detail) out += "    " + d + "\n";
  }
  return out;
}

std::string json_output(const std::vector<Result>& results) {
  std::string out = "{\"findings\": [";
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    out += std::string(i ? ", " : "") + "{\"id\": " + json_string(r.rule_id) +
           ", \"severity\": " + json_string(ir::to_string(r.severity)) +
           ", \"file\": " + json_string(r.loc.file) + ", \"line\": " + std::to_string(r.loc.line) +
           ", \"column\": " + std::to_string(r.loc.col) + ", \"message\": " + json_string(r.message) + "}";
  }
  return out + "]}\n";
}

// SARIF 2.1.0, the format code-scanning services read.
std::string sarif_output(const std::vector<Result>& results) {
  std::string out =
      "{\"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\", \"version\": \"2.1.0\", "
      "\"runs\": [{\"tool\": {\"driver\": {\"name\": \"zpolicy\"}}, \"results\": [";
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const char* level = r.severity == ir::Severity::Error ? "error"
                        : r.severity == ir::Severity::Warning ? "warning" : "note";
    out += std::string(i ? ", " : "") + "{\"ruleId\": " + json_string(r.rule_id) +
           ", \"level\": \"" + level + "\", \"message\": {\"text\": " + json_string(r.message) +
           "}, \"locations\": [{\"physicalLocation\": {\"artifactLocation\": {\"uri\": " +
           json_string(uri_reference(r.loc.file)) + "}, \"region\": {\"startLine\": " +
           std::to_string(std::max(r.loc.line, 1)) + ", \"startColumn\": " +
           std::to_string(std::max(r.loc.col, 1)) + "}}}]}";
  }
  return out + "]}]}\n";
}

}  // namespace

int cmd_check(const Args& args) {
  const std::string usage = "zpolicy check POLICY [--workspace DIR] [--format text|json|sarif]";
  po::options_description opts("check options");
  opts.add_options()("policy", po::value<std::string>()->required(), "policy file")(
      "workspace", po::value<std::string>(),
      "also run the host-bound lints and verify the linux artifacts bound to DIR")(
      "format", po::value<std::string>()->default_value("text"), "text, json or sarif");
  po::positional_options_description pos;
  pos.add("policy", 1);
  po::variables_map vm;
  bool help = false;
  if (!parse_options(args, usage, opts, pos, vm, help)) return kExitUsage;
  if (help) return kExitOk;
  const std::string format = vm["format"].as<std::string>();
  ir::Diagnostics diags;
  if (format != "text" && format != "json" && format != "sarif")
    diags.error({"<command line>"}, "invalid --format (expected text, json or sarif)");
  const std::string path = vm["policy"].as<std::string>();
  auto policy = load_policy(path, diags);
  std::optional<compiler::HostFacts> host;
  if (policy && !diags.has_errors() && vm.count("workspace"))
    host = compiler::host_facts(vm["workspace"].as<std::string>(), diags);
  if (!policy || diags.has_errors()) {
    print_diagnostics(diags);
    return kExitUsage;
  }

  const auto results =
      compiler::check_policy(*policy, {host, canonical(path), canonical("/proc/self/exe")});
  const bool failed = compiler::has_errors(results);
  if (format == "json") std::cout << json_output(results);
  else if (format == "sarif") std::cout << sarif_output(results);
  else {
    std::cout << text_output(results);
    std::cout << path << ": " << results.size() << " finding" << (results.size() == 1 ? "" : "s")
              << (failed ? ", check failed\n" : ", check passed\n");
  }
  return failed ? kExitVerify : kExitOk;
}

}  // namespace zpolicy::cli
