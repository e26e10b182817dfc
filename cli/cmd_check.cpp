#include <climits>
#include <cstdlib>
#include <unistd.h>

#include "cli/json.hpp"
#include "cli/options.hpp"
#include "compiler/backend_paths.hpp"
#include "compiler/pipeline.hpp"
#include "compiler/check.hpp"
#include "compiler/lint/lint_catalog.hpp"
#include "zpolicy/version.hpp"

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

// The help URI of every rule: the table in docs/lints.md, under the project's one address.
constexpr const char* kLintsDoc = ZPOLICY_HOMEPAGE_URL "/blob/main/docs/lints.md";

const char* sarif_level(ir::Severity s) {
  return s == ir::Severity::Error ? "error" : s == ir::Severity::Warning ? "warning" : "note";
}

// SARIF 2.1.0, the format code-scanning services read: every rule of the catalog as
// metadata (so a result's rule is described even where docs are not at hand), then the
// results, each pointing at its rule by id and index.
std::string sarif_output(const std::vector<Result>& results) {
  const auto& rules = compiler::lint_catalog();
  std::string out =
      "{\"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\", \"version\": \"2.1.0\", "
      "\"runs\": [{\"tool\": {\"driver\": {\"name\": \"zpolicy\", \"version\": \"" ZPOLICY_VERSION
      "\", \"informationUri\": " + json_string(ZPOLICY_HOMEPAGE_URL) + ", \"rules\": [";
  for (size_t i = 0; i < rules.size(); ++i) {
    const auto& r = rules[i];
    out += std::string(i ? ", " : "") + "{\"id\": " + json_string(r.id) +
           ", \"name\": " + json_string(r.name) +
           ", \"shortDescription\": {\"text\": " + json_string(r.summary) +
           "}, \"fullDescription\": {\"text\": " + json_string(r.description) +
           "}, \"helpUri\": " + json_string(kLintsDoc) +
           ", \"defaultConfiguration\": {\"level\": \"" + sarif_level(r.level) + "\"}}";
  }
  out += "]}}, \"results\": [";
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    std::string index;
    for (size_t k = 0; k < rules.size(); ++k)
      if (rules[k].id == r.rule_id) index = ", \"ruleIndex\": " + std::to_string(k);
    out += std::string(i ? ", " : "") + "{\"ruleId\": " + json_string(r.rule_id) + index +
           ", \"level\": \"" + sarif_level(r.severity) + "\", \"message\": {\"text\": " +
           json_string(r.message) +
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
    // A machine reader still gets a document: the reasons are its results (ZP000).
    if (format == "json" || format == "sarif") {
      std::vector<Result> invalid;
      for (const auto& d : diags.all())
        invalid.push_back({std::string(compiler::kInvalidPolicyRule), d.severity, d.loc, d.message, {}});
      std::cout << (format == "json" ? json_output(invalid) : sarif_output(invalid));
    }
    print_diagnostics(diags);
    return kExitUsage;
  }

  // The policy file as it is opened (its symlinks are followed one by one, ZP004).
  std::string opened = path;
  if (!opened.starts_with("/")) {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd)) opened = std::string(cwd) + "/" + path;
  }
  const auto results = compiler::check_policy(
      *policy, {host, opened, canonical("/proc/self/exe"), std::string(compiler::kBwrapPath), {}});
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
