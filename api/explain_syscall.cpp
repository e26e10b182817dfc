// `explain --syscall NAME --args ...`: the rule of the policy's syscall filter that decides
// one call, and what the compiled seccomp program returns for it, run by the analyzer's
// interpreter (never by the emitter's idea of it).
#include <cstdio>

#include "api/bound_refusal.hpp"
#include "api/request.hpp"
#include "api/syscall_call.hpp"
#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/listing_check.hpp"
#include "compiler/analyzer/seccomp/syscall_decision.hpp"
#include "compiler/review/syscall_words.hpp"

namespace zpolicy {
namespace {

// "socket(AF_UNIX, SOCK_STREAM)": the call as the user asked it, constants by name.
std::string call_words(const SyscallCall& asked, const api::ParsedCall& c) {
  const std::string name = c.info ? std::string(c.info->name) : asked.syscall;
  std::string out = name + "(";
  for (size_t i = 0; i < asked.args.size(); ++i)
    out += (i ? ", " : "") +
           compiler::review::value_words(name, static_cast<unsigned>(i), c.args[i]);
  out += ")";
  if (c.arch != ir::Arch::X86_64) out += " on " + std::string(ir::to_string(c.arch));
  return out;
}

// The policy's answer: its action, the rule that gives it and that rule's line.
void policy_side(const ir::Policy& policy, const ir::SyscallPolicy& filter,
                 const api::ParsedCall& c, ExplainAnswer& out) {
  compiler::SyscallCall call;
  call.arch = c.arch;
  call.nr = c.arch == ir::Arch::X32 ? c.nr | ir::kX32SyscallBit : c.nr;
  call.args = c.args;
  const ir::Action action = compiler::decide(filter, call);
  out.policy = action.str();
  out.line = {ir::kBuiltinFile, 0, 0};
  if (c.arch != ir::Arch::X86_64) {
    out.rule = "calls through another ABI than x86_64 (the policy is written for x86_64)";
    return;
  }
  if (!c.info) {
    out.rule = "a number no x86_64 system call has";
    return;
  }
  const ir::SyscallRule* decided = nullptr;
  for (const auto& r : filter.rules) {
    if (r.name != c.info->name) continue;
    bool holds = true;
    for (const auto& cond : r.conditions)
      holds = holds && cond.index < 6 &&
              compiler::condition_holds(cond, c.info->args[cond.index], c.args[cond.index]);
    if (holds && (!decided || ir::more_restrictive(r.action, decided->action))) decided = &r;
  }
  if (!decided) {
    out.rule = "the default for calls no rule names";
    if (policy.syscalls.style == ir::SyscallSpec::Style::AllowList &&
        !policy.syscalls.action.loc.file.empty())
      out.line = api::line_of(policy.syscalls.action.loc);
    return;
  }
  out.rule = "rule for " + decided->name;
  for (size_t i = 0; i < decided->conditions.size(); ++i)
    out.rule += (i ? " and " : " when ") +
                compiler::review::condition_words(decided->name, decided->conditions[i]);
  if (!decided->loc.file.empty()) out.line = api::line_of(decided->loc);
}

// The program's answer, with the instruction that returns it: first its line in the
// listing a reviewer reads (seccomp.txt), then its number in seccomp.bpf.
void artifact_side(const std::string& program, const std::string& listing, const api::ParsedCall& c,
                   ExplainAnswer& out) {
  const auto prog = compiler::parse_bpf(program);
  if (!prog) {
    out.artifact = "cannot evaluate: " + prog.error().message;
    return;
  }
  compiler::SeccompData data;
  data.arch = ir::audit_arch(c.arch);
  data.nr = c.arch == ir::Arch::X32 ? c.nr | ir::kX32SyscallBit : c.nr;
  data.args = c.args;
  std::vector<uint32_t> trace;
  const compiler::BpfRun run = compiler::run_bpf(*prog, data, &trace);
  const auto action = compiler::decode_seccomp_ret(run.ret);
  out.artifact = action ? action->str() : compiler::seccomp_action_text(run.ret);
  char ret[16];
  std::snprintf(ret, sizeof ret, "%#x", run.ret);
  if (!trace.empty())
    if (const auto listed = compiler::listing_line(listing, trace.back()))
      out.trace.push_back("seccomp.txt:" + std::to_string(listed->line) + ": " +
                          std::string(listed->text));
  out.trace.push_back("seccomp.bpf instruction " +
                      (trace.empty() ? std::string("(none)") : std::to_string(trace.back())) +
                      " returns " + ret + ", after " + std::to_string(run.executed) +
                      " instructions (`zpolicy inspect seccomp.bpf` lists them)");
}

}  // namespace

Explanation explain_syscall(const Request& request, const SyscallCall& call,
                            const std::optional<std::string>& target) {
  Explanation out;
  ir::Diagnostics diags;
  const auto parsed = api::parse_call(call, true);
  if (const auto* why = std::get_if<std::string>(&parsed)) diags.error({"<command line>"}, *why);
  std::vector<Target> targets = {Target::Linux, Target::Macos};
  if (target) {
    const auto t = parse_target(*target);
    if (!t) diags.error({"<command line>"}, "invalid --target (expected linux or macos)");
    else targets = {*t};
  }
  auto loaded = api::load_request(request, diags);
  if (!loaded || diags.has_errors()) {
    api::add_all(out.diagnostics, diags);
    out.exit_code = kExitUsage;
    return out;
  }
  if (loaded->host && !target) targets = {Target::Linux};
  if (auto refused = api::bound_refusal(*loaded, request, out.notes)) return std::move(*refused);
  const api::ParsedCall& c = std::get<api::ParsedCall>(parsed);
  out.query = call_words(call, c);
  for (const Target t : targets) {
    ExplainAnswer a;
    a.target = t;
    if (loaded->mode == ir::Mode::DangerFullAccess) {
      a.policy = "allowed";
      a.rule = "mode danger-full-access: no sandbox";
      a.line = api::line_of(loaded->policy.mode.loc);
      a.artifact = "allowed: no filter is installed";
      out.answers.push_back(std::move(a));
      continue;
    }
    if (t == Target::Macos) {
      a.policy = "not enforced";
      a.rule = "Seatbelt has no system call filter: `syscalls` applies to Linux only";
      a.line = {ir::kBuiltinFile, 0, 0};
      a.artifact = "not filtered (profile.sb decides by the files and network it reaches)";
      out.answers.push_back(std::move(a));
      continue;
    }
    auto compiled = compiler::compile(loaded->policy, compiler::Target::Linux, loaded->mode,
                                      loaded->host, diags);
    if (!compiled) {
      api::add_all(out.diagnostics, diags);
      out.exit_code = kExitUsage;
      return out;
    }
    policy_side(loaded->policy, compiled->resolved.syscalls, c, a);
    std::string program, listing;
    for (const auto& art : compiled->artifacts) {
      if (art.name == "seccomp.bpf") program = art.content;
      if (art.name == "seccomp.txt") listing = art.content;
    }
    artifact_side(program, listing, c, a);
    out.answers.push_back(std::move(a));
  }
  return out;
}

}  // namespace zpolicy
