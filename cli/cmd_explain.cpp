#include "cli/options.hpp"
#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/pipeline.hpp"
#include "compiler/analyzer/bwrap/mount_table.hpp"
#include "compiler/analyzer/probes.hpp"
#include "compiler/analyzer/sbpl/sbpl_verify.hpp"
#include "compiler/network/admission.hpp"

namespace zpolicy::cli {
namespace {

std::optional<compiler::FsOp> parse_op(const std::string& s) {
  for (auto op : compiler::kAllFsOps)
    if (s == compiler::to_string(op)) return op;
  return std::nullopt;
}

std::string artifact(const compiler::Compiled& c, const std::string& name) {
  for (const auto& a : c.artifacts)
    if (a.name == name) return a.content;
  return {};
}

// The Linux answer: the policy's intent as the bwrap verifier reads it, then the argv's
// mount plan replayed by the independent evaluator.
void explain_linux(const compiler::Compiled& c, const compiler::SymbolicPath& path,
                   compiler::FsOp op) {
  const auto e = compiler::Intent(c.resolved).expect(path, op);
  std::cout << "  policy: " << compiler::to_string(e.expect) << " — " << e.reason << " ("
            << e.rule.str() << ")\n";
  auto parsed = compiler::parse_bwrap_args(artifact(c, "bwrap.args"));
  if (!parsed.argv) {
    std::cout << "  linux:  the argv does not parse: " << parsed.error->message << "\n";
    return;
  }
  auto table = compiler::MountTable::replay(*parsed.argv, [](size_t) { return true; });
  if (auto* err = std::get_if<compiler::MountTable::ReplayError>(&table)) {
    std::cout << "  linux:  bwrap would refuse the argv (line " << err->line << "): "
              << err->message << "\n";
    return;
  }
  auto result = std::get<compiler::MountTable>(table).access(path, op);
  std::cout << "  linux:  " << compiler::to_string(result.outcome) << "\n";
  for (const auto& t : result.trace) std::cout << "          " << t << "\n";
}

void explain_macos(const compiler::Compiled& c, const std::string& path, compiler::FsOp op) {
  std::string error;
  const std::string params_text = artifact(c, "params.txt");  // the parameters view it
  auto params = compiler::parse_params_text(params_text, &error);
  // Seatbelt has no single "delete": unlinking and renaming away are file-write-unlink.
  const char* operation = op == compiler::FsOp::Delete ? "file-write-unlink" : compiler::to_string(op);
  std::optional<compiler::SbplExplanation> e;
  if (params) e = compiler::explain_sbpl(c.resolved, artifact(c, "profile.sb"), *params, operation, path, &error);
  if (!e) {
    std::cout << "  macos:  cannot evaluate: " << error << "\n";
    return;
  }
  // The intent the Seatbelt verifier holds the profile to, which is what decides whether
  // the profile passes; it may be stricter than Linux's (a directory above a protected
  // path cannot be renamed away on macOS).
  const auto intent = e->policy.intent;
  std::cout << "  policy: "
            << (intent == compiler::SbplIntent::Allow  ? "allowed"
                : intent == compiler::SbplIntent::Deny ? "denied"
                                                       : "either answer passes verification")
            << " — " << e->policy.why;
  if (!e->policy.loc.file.empty()) std::cout << " (" << e->policy.loc.str() << ")";
  std::cout << "\n";
  std::cout << "  macos:  " << (e->allowed ? "allowed" : "denied")
            << (e->models_agree ? "" : " (precedence models disagree)") << "\n";
  for (const auto& t : e->trace) std::cout << "          " << t << "\n";
}

// `--connect HOST:PORT`: what the policy's network says about one destination. The
// name is not resolved here: the proxy resolves it at run time and refuses it then if any
// address is not public (docs/network.md).
int explain_connect(const ir::Policy& policy, std::optional<ir::Mode> mode,
                    const std::string& text) {
  const auto colon = text.rfind(':');
  unsigned long port = 0;
  if (colon == std::string::npos || colon == 0 ||
      text.find_first_not_of("0123456789", colon + 1) != std::string::npos ||
      colon + 1 == text.size() || (port = std::stoul(text.substr(colon + 1))) == 0 ||
      port > 65535) {
    ir::Diagnostics diags;
    diags.error({"<command line>"}, "invalid --connect '" + text + "' (expected HOST:PORT)");
    print_diagnostics(diags);
    return kExitUsage;
  }
  const std::string host = text.substr(0, colon);
  const ir::Mode effective = mode ? *mode : policy.mode.value;
  ir::Network n = effective == ir::Mode::ReadOnly ? ir::Network::None : policy.network.value;
  std::cout << "connect " << text << "\n";
  const std::string rule =
      policy.network.loc.file.empty() ? std::string(ir::kBuiltinFile) : policy.network.loc.str();
  if (effective == ir::Mode::DangerFullAccess || n == ir::Network::Full) {
    std::cout << "  policy: allowed — network full (" << rule << ")\n";
    return kExitOk;
  }
  if (n != ir::Network::Allow) {
    std::cout << "  policy: refused — network " << ir::to_string(n)
              << (n == ir::Network::Loopback ? ": only the sandbox's own loopback" : "") << " ("
              << rule << ")\n";
    return kExitOk;
  }
  const auto a = compiler::match_destination(policy.allow, host, static_cast<uint16_t>(port));
  if (!a.admitted) {
    std::cout << "  policy: refused (" << compiler::to_string(*a.refusal) << ") — " << a.reason
              << "\n";
    return kExitOk;
  }
  std::cout << "  policy: admitted — " << a.reason << "\n";
  if (a.entry->value.kind == ir::DestinationKind::Localhost)
    std::cout << "  linux:  127.0.0.1:" << port << " inside the sandbox is forwarded to the "
              << "host's 127.0.0.1:" << port << "; the proxy admits it too\n"
              << "  macos:  the profile allows localhost:" << port << "\n";
  else
    std::cout << "  linux:  through zpolicy's proxy only (HTTP CONNECT or an absolute-form "
                 "request); the proxy resolves the name and refuses it if any address is "
                 "loopback, private, link-local, multicast or unspecified\n"
              << "  macos:  refused: the proxy is not served on macOS yet (issue 15)\n";
  return kExitOk;
}

}  // namespace

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

  ir::Diagnostics diags;
  if (!vm.count("connect") && !vm.count("path")) {
    std::cerr << "zpolicy: missing the PATH argument\nusage: " << usage << "\n";
    return kExitUsage;
  }
  if (vm.count("connect") && vm.count("path")) {
    diags.error({"<command line>"}, "give either PATH or --connect HOST:PORT");
    print_diagnostics(diags);
    return kExitUsage;
  }
  if (vm.count("connect")) {
    auto req = load_request(vm, diags);
    if (!req || diags.has_errors()) {
      print_diagnostics(diags);
      return kExitUsage;
    }
    return explain_connect(req->policy, req->mode, vm["connect"].as<std::string>());
  }
  auto op = parse_op(vm["op"].as<std::string>());
  if (!op) diags.error({"<command line>"}, "invalid --op (expected read, write, create or delete)");
  std::vector<compiler::Target> targets = {compiler::Target::Linux, compiler::Target::Macos};
  if (vm.count("target")) {
    auto t = compiler::parse_target(vm["target"].as<std::string>());
    if (!t) diags.error({"<command line>"}, "invalid --target (expected linux or macos)");
    else targets = {*t};
  }
  auto path = compiler::SymbolicPath::parse(vm["path"].as<std::string>());
  if (!path)
    diags.error({"<command line>"}, "invalid path '" + vm["path"].as<std::string>() +
                                        "' (absolute, or starting with ${WORKSPACE}, ${HOME}, ${TMPDIR})");
  auto req = load_request(vm, diags);
  if (!req || diags.has_errors()) {
    print_diagnostics(diags);
    return kExitUsage;
  }
  // A bound policy is a policy for this host, and this host is Linux.
  if (req->host && !vm.count("target")) targets = {compiler::Target::Linux};

  bool printed_header = false;
  for (auto target : targets) {
    auto c = compiler::compile(req->policy, target, req->mode, req->host, diags);
    if (!c) {
      print_diagnostics(diags);
      return kExitUsage;
    }
    if (!printed_header) {
      std::cout << compiler::to_string(*op) << " " << path->str() << "\n";
      printed_header = true;
      // Portable output names a pattern as one symbolic entry, which the answers below
      // compare as text: say so rather than let "allowed" stand for a matched path.
      if (!req->host && (!req->policy.protect_patterns.empty() || !req->policy.deny_patterns.empty()))
        std::cout << "  note:   patterns (e.g. '"
                  << (req->policy.protect_patterns.empty() ? req->policy.deny_patterns
                                                           : req->policy.protect_patterns)
                         .front()
                         .value.str()
                  << "') are expanded only against a host; add --workspace DIR for what they "
                     "match there\n";
    }
    if (target == compiler::Target::Linux) explain_linux(*c, *path, *op);
    else explain_macos(*c, path->str(), *op);
  }
  return kExitOk;
}

}  // namespace zpolicy::cli
