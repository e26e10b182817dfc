#include "zpolicy/json.hpp"
#include "cli/options.hpp"

namespace zpolicy::cli {
namespace {

// A check result's location as the text output gives it: "file:line:col", or "file".
std::string location(const Diagnostic& d) {
  if (d.line <= 0) return d.file;
  return d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column);
}

const char* severity_name(Severity s) {
  return s == Severity::Error ? "error" : s == Severity::Warning ? "warning" : "note";
}

std::string text_output(const std::vector<Diagnostic>& results) {
  std::string out;
  for (const auto& r : results) {
    out += location(r) + ": " + severity_name(r.severity) + ": " + r.message + " [" + r.code + "]\n";
    for (const auto& d : r.trace) out += "    " + d + "\n";
  }
  return out;
}

std::string json_output(const std::vector<Diagnostic>& results) {
  std::string out = "{\"findings\": [";
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    out += std::string(i ? ", " : "") + "{\"id\": " + json_string(r.code) +
           ", \"severity\": " + json_string(severity_name(r.severity)) +
           ", \"file\": " + json_string(r.file) + ", \"line\": " + std::to_string(r.line) +
           ", \"column\": " + std::to_string(r.column) + ", \"message\": " + json_string(r.message) + "}";
  }
  return out + "]}\n";
}

// The help URI of every rule: the table in docs/lints.md, under the project's one address.
constexpr const char* kLintsDoc = ZPOLICY_HOMEPAGE_URL "/blob/main/docs/lints.md";

const char* sarif_level(Severity s) { return severity_name(s); }

// SARIF 2.1.0, the format code-scanning services read: every rule of the catalog as
// metadata (so a result's rule is described even where docs are not at hand), then the
// results, each pointing at its rule by id and index.
std::string sarif_output(const std::vector<Diagnostic>& results) {
  const auto rules = lint_rules();
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
      if (rules[k].id == r.code) index = ", \"ruleIndex\": " + std::to_string(k);
    out += std::string(i ? ", " : "") + "{\"ruleId\": " + json_string(r.code) + index +
           ", \"level\": \"" + sarif_level(r.severity) + "\", \"message\": {\"text\": " +
           json_string(r.message) +
           "}, \"locations\": [{\"physicalLocation\": {\"artifactLocation\": {\"uri\": " +
           json_string(uri_reference(r.file)) + "}, \"region\": {\"startLine\": " +
           std::to_string(std::max(r.line, 1)) + ", \"startColumn\": " +
           std::to_string(std::max(r.column, 1)) + "}}}]}";
  }
  return out + "]}]}\n";
}

// `check POLICY --within CEILING`: the escapes, in the review's forms (docs/review.md).
int check_within_ceiling(const Request& request, const std::string& ceiling,
                         const std::string& format_name) {
  const auto format = parse_diff_format(format_name);
  Request ceiling_request;
  ceiling_request.policy_file = ceiling;
  if (!format) {
    print_diagnostics({usage_error("invalid --format with --within (expected text, json or markdown)")});
    return kExitUsage;
  }
  const auto result = check_within(request, ceiling_request);
  if (result.exit_code == kExitUsage) {
    print_diagnostics(result.diagnostics);
    return kExitUsage;
  }
  std::cout << render_diff(result, *format);
  return result.exit_code;
}

}  // namespace

int cmd_check(const Args& args) {
  const std::string usage =
      "zpolicy check POLICY [--workspace DIR] [--format text|json|sarif]\n"
      "       zpolicy check POLICY --within CEILING [--mode M] [--format text|json|markdown]";
  po::options_description opts("check options");
  opts.add_options()("policy", po::value<std::string>()->required(), "policy file")(
      "workspace", po::value<std::string>(),
      "also run the host-bound lints and verify the linux artifacts bound to DIR")(
      "format", po::value<std::string>()->default_value("text"), "text, json or sarif")(
      "within", po::value<std::string>(),
      "prove POLICY allows nothing CEILING does not (every target, every mode up to POLICY's)")(
      "mode", po::value<std::string>(), "with --within: check POLICY narrowed to mode M");
  po::positional_options_description pos;
  pos.add("policy", 1);
  po::variables_map vm;
  bool help = false;
  if (!parse_options(args, usage, opts, pos, vm, help)) return kExitUsage;
  if (help) return kExitOk;
  const std::string format = vm["format"].as<std::string>();
  const Request request = request_of(vm);
  const std::string path = vm["policy"].as<std::string>();
  if (vm.count("within")) {
    if (vm.count("workspace")) {
      // The comparison is portable (docs/review.md): a host binding would be ignored.
      print_diagnostics({usage_error("--within compares portable policies; drop --workspace")});
      return kExitUsage;
    }
    return check_within_ceiling(request, vm["within"].as<std::string>(), format);
  }
  if (vm.count("mode")) {
    // check covers every mode the ceiling admits; a narrower one is a question for --within.
    print_diagnostics({usage_error("--mode is only for --within (check covers every mode)")});
    return kExitUsage;
  }
  if (format != "text" && format != "json" && format != "sarif") {
    std::vector<Diagnostic> diags = {usage_error("invalid --format (expected text, json or sarif)")};
    auto checked = validate(request);
    diags.insert(diags.end(), checked.diagnostics.begin(), checked.diagnostics.end());
    print_diagnostics(diags);
    return kExitUsage;
  }
  const auto checked = check(request);
  if (checked.exit_code == kExitUsage) {
    // A machine reader still gets a document: the reasons are its results (ZP000, the
    // rule of a policy that does not load).
    if (format == "json" || format == "sarif") {
      std::vector<Diagnostic> invalid = checked.diagnostics;
      for (auto& d : invalid) d.code = "ZP000";
      std::cout << (format == "json" ? json_output(invalid) : sarif_output(invalid));
    }
    print_diagnostics(checked.diagnostics);
    return kExitUsage;
  }
  const auto& results = checked.diagnostics;
  const bool failed = checked.exit_code == kExitVerify;
  if (format == "json") std::cout << json_output(results);
  else if (format == "sarif") std::cout << sarif_output(results);
  else {
    std::cout << text_output(results);
    std::cout << path << ": " << results.size() << " finding" << (results.size() == 1 ? "" : "s")
              << (failed ? ", check failed\n" : ", check passed\n");
  }
  return checked.exit_code;
}

}  // namespace zpolicy::cli
