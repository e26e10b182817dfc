#include <climits>
#include <cstdlib>
#include <unistd.h>

#include "cli/json.hpp"
#include "cli/options.hpp"
#include "compiler/backend_paths.hpp"
#include "compiler/pipeline.hpp"
#include "compiler/lint/policy_lint.hpp"
#include "compiler/lint/syscall_lint.hpp"

namespace zpolicy::cli {
namespace {

// One line of `check` output, whichever check produced it.
struct Result {
  std::string rule_id;  // lint ID, or "verify-<target>"
  ir::Severity severity;
  ir::SourceLoc loc;
  std::string message;
  std::vector<std::string> detail;
};

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

  std::vector<Result> results;
  // The policy file as it is opened (its symlinks are followed one by one, ZP004).
  std::string opened = path;
  if (!opened.starts_with("/")) {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd)) opened = std::string(cwd) + "/" + path;
  }
  compiler::LintContext ctx{host, opened, canonical("/proc/self/exe"),
                            std::string(compiler::kBwrapPath)};
  for (const auto& l : compiler::lint_policy(*policy, ctx))
    results.push_back({l.id, l.severity, l.loc, l.message, {}});
  ir::Diagnostics syscall_diags;
  compiler::lint_syscall_rules(policy->syscalls, syscall_diags);
  for (const auto& d : syscall_diags.all())
    results.push_back({"ZP100", d.severity, d.loc, d.message, {}});

  // Verification of every target, for every confined mode the ceiling allows.
  for (ir::Mode mode : {ir::Mode::ReadOnly, ir::Mode::WorkspaceWrite}) {
    if (!ir::narrower_or_equal(mode, policy->mode.value)) continue;
    for (auto target : {compiler::Target::Linux, compiler::Target::Macos}) {
      std::vector<std::optional<compiler::HostFacts>> bindings = {std::nullopt};
      if (host && target == compiler::Target::Linux) bindings.push_back(host);
      for (const auto& binding : bindings) {
        ir::Diagnostics cd;
        auto compiled = compiler::compile(*policy, target, mode, binding, cd);
        for (const auto& d : cd.all())
          results.push_back({std::string("verify-") + compiler::to_string(target), d.severity,
                             d.loc, d.message, {}});
        if (!compiled) continue;
        for (const auto& f : compiled->findings)
          results.push_back({std::string("verify-") + compiler::to_string(target),
                             ir::Severity::Error, f.rule,
                             std::string(ir::to_string(mode)) + (binding ? " bound" : "") + ": " +
                                 f.kind + ": " + f.probe + ": expected " + f.expected +
                                 ", artifact gives " + f.actual,
                             f.trace});
      }
    }
  }
  bool failed = false;
  for (const auto& r : results) failed |= r.severity == ir::Severity::Error;
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
