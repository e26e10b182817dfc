// `explain --connect HOST:PORT`: what the policy's network says about one destination,
// and how each target reaches it. The name is not resolved here: the proxy resolves it
// at run time and refuses it then if any address is not public (docs/network.md).
#include <algorithm>

#include "api/bound_refusal.hpp"
#include "api/request.hpp"
#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"
#include "compiler/analyzer/sbpl/sbpl_verify.hpp"
#include "compiler/network/admission.hpp"
#include "compiler/pipeline.hpp"
#include "ir/target.hpp"

namespace zpolicy {
namespace {

std::string artifact_text(const compiler::Compiled& c, const std::string& name) {
  for (const auto& a : c.artifacts)
    if (a.name == name) return a.content;
  return {};
}

// The artifact lines that decide the connection, read back from what compile emits for
// this policy (issue 16 §4): Linux the sandbox's own network namespace in bwrap.args;
// macOS the rule of profile.sb that decides network-outbound to HOST:PORT (portable
// output only: a policy bound on this host has no macOS artifacts).
void deciding_lines(const api::Loaded& loaded, const std::string& destination,
                    ExplainAnswer& linux_answer, ExplainAnswer& macos_answer) {
  if (loaded.mode == ir::Mode::DangerFullAccess) return;  // no sandbox, no artifact
  ir::Diagnostics ignored;  // the policy compiled already for the bound-refusal check
  if (const auto c = compiler::compile(loaded.policy, compiler::Target::Linux, loaded.mode,
                                       loaded.host, ignored)) {
    const std::string args = artifact_text(*c, "bwrap.args");
    const auto lines = ir::artifact_lines(args);
    if (const auto it = std::find(lines.begin(), lines.end(), "--unshare-net"); it != lines.end())
      linux_answer.trace.push_back("bwrap.args:" + std::to_string(it - lines.begin() + 1) +
                                   ": --unshare-net (a network namespace of the sandbox's "
                                   "own: its own loopback, no host interface)");
    if (linux_answer.trace.empty())
      linux_answer.trace.push_back("bwrap.args: no --unshare-net (the host's network)");
  }
  if (loaded.host) return;
  const auto c = compiler::compile(loaded.policy, compiler::Target::Macos, loaded.mode,
                                   std::nullopt, ignored);
  if (!c || c->artifacts.empty()) return;  // refused before emission: nothing to read
  const std::string profile_text = artifact_text(*c, "profile.sb");
  const std::string params_text = artifact_text(*c, "params.txt");  // the parameters view it
  const auto list = compiler::parse_params_text(params_text);
  auto parsed = compiler::parse_sbpl(profile_text);
  if (!list || !parsed) return;
  const compiler::SbplParams values(list->begin(), list->end());
  const auto profile = compiler::bind_params(std::move(*parsed), values);
  const auto decisions =
      compiler::decide_all_models(profile, "network-outbound", destination, values);
  const bool allowed = decisions.front().allowed;  // last-match, the first model
  macos_answer.trace.push_back(decisions.front().trace);
  for (const auto& d : decisions) macos_answer.models_agree = macos_answer.models_agree && d.allowed == allowed;
  if (allowed != macos_answer.artifact.starts_with("allowed"))
    macos_answer.artifact = allowed ? "allowed" : "refused";
}

}  // namespace

Explanation explain_connect(const Request& request, const std::string& destination) {
  Explanation out;
  ir::Diagnostics diags;
  const auto colon = destination.rfind(':');
  const bool port_digits = colon != std::string::npos && colon + 1 < destination.size() &&
                           colon + 6 >= destination.size() &&
                           destination.find_first_not_of("0123456789", colon + 1) == std::string::npos;
  const unsigned long port = port_digits ? std::stoul(destination.substr(colon + 1)) : 0;
  if (colon == 0 || port == 0 || port > 65535)
    diags.error({"<command line>"}, "invalid --connect '" + destination + "' (expected HOST:PORT)");
  auto loaded = api::load_request(request, diags);
  if (!loaded || diags.has_errors()) {
    api::add_all(out.diagnostics, diags);
    out.exit_code = kExitUsage;
    return out;
  }
  // Where a run bound here would not start, there is no connection to explain either, as
  // for paths and syscalls.
  if (auto refused = api::bound_refusal(*loaded, request, out.notes)) return std::move(*refused);
  const ir::Policy& policy = loaded->policy;
  const std::string host = destination.substr(0, colon);
  out.query = "connect " + destination;
  const ir::Network n =
      loaded->mode == ir::Mode::ReadOnly ? ir::Network::None : policy.network.value;
  ExplainAnswer linux_answer, macos_answer;
  linux_answer.target = Target::Linux;
  macos_answer.target = Target::Macos;
  const PolicyLine network_line = policy.network.loc.file.empty()
                                      ? PolicyLine{ir::kBuiltinFile, 0, 0}
                                      : api::line_of(policy.network.loc);
  auto decide = [&](std::string verdict, std::string rule, PolicyLine line) {
    for (auto* a : {&linux_answer, &macos_answer}) {
      a->policy = verdict;
      a->rule = rule;
      a->line = line;
    }
  };
  if (loaded->mode == ir::Mode::DangerFullAccess || n == ir::Network::Full) {
    decide("allowed", loaded->mode == ir::Mode::DangerFullAccess ? "mode danger-full-access"
                                                                 : "network full",
           network_line);
    linux_answer.artifact = macos_answer.artifact = "allowed: the host network";
  } else if (n != ir::Network::Allow) {
    decide("refused", std::string("network ") + ir::to_string(n), network_line);
    linux_answer.artifact = n == ir::Network::Loopback
                                ? "refused: only the sandbox's own loopback is reachable"
                                : "refused: no socket reaches anything";
    macos_answer.artifact = "refused";
    // macOS has no network namespace: its `loopback` is the host's own (docs/macos.md).
    if (n == ir::Network::Loopback && host == "localhost") {
      macos_answer.policy = "allowed";
      macos_answer.rule = "network loopback: on macOS the host's own loopback";
      macos_answer.artifact = "allowed";
    }
  } else {
    const auto a =
        compiler::match_destination(policy.allow, host, static_cast<uint16_t>(port));
    if (!a.admitted) {
      decide(std::string("refused (") + compiler::to_string(*a.refusal) + ")", a.reason,
             network_line);
      linux_answer.artifact =
          "refused: the proxy refuses it; a direct connection reaches only the sandbox's own "
          "loopback";
      macos_answer.artifact = "refused";
    } else {
      decide("admitted", a.reason, api::line_of(a.entry->loc));
      if (a.entry->value.kind == ir::DestinationKind::Localhost) {
        linux_answer.artifact = "127.0.0.1:" + std::to_string(port) +
                                " inside the sandbox is forwarded to the host's 127.0.0.1:" +
                                std::to_string(port);
        macos_answer.artifact = "allowed: the profile allows localhost:" + std::to_string(port);
      } else {
        linux_answer.artifact =
            "through zpolicy's proxy only (HTTP CONNECT or an absolute-form request); the proxy "
            "resolves the name and refuses it if any address is not public";
        macos_answer.artifact = "refused: the proxy is not served on macOS yet (issue 15)";
      }
    }
  }
  deciding_lines(*loaded, destination, linux_answer, macos_answer);
  out.answers.push_back(std::move(linux_answer));
  out.answers.push_back(std::move(macos_answer));
  return out;
}

}  // namespace zpolicy
