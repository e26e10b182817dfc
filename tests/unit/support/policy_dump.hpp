#pragma once

// Canonical text of the IR (every value with its provenance), so that tests can compare
// whole policies and resolved policies with one readable diff.
#include <string>

#include "ir/policy.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::test {

inline std::string dump_rule(const ir::SyscallRule& r) {
  std::string out = r.name + " " + r.action.str();
  for (const auto& c : r.conditions)
    out += " arg" + std::to_string(c.index) + ":" + ir::to_string(c.op) + ":" +
           std::to_string(c.value) + "/" + std::to_string(c.mask);
  return out + " @" + r.loc.str();
}

inline std::string dump(const ir::Policy& p) {
  std::string out = "origin " + p.origin.str() + "\n";
  out += std::string("mode ") + ir::to_string(p.mode.value) + " @" + p.mode.loc.str() + "\n";
  auto paths = [&](const char* what, const auto& v) {
    for (const auto& x : v)
      out += std::string(what) + " " + x.value.str() + " @" + x.loc.str() + "\n";
  };
  paths("read", p.read);
  paths("write", p.write);
  paths("protect", p.protect);
  paths("deny", p.deny);
  paths("protect-pattern", p.protect_patterns);
  paths("deny-pattern", p.deny_patterns);
  out +=
      std::string("network ") + ir::to_string(p.network.value) + " @" + p.network.loc.str() + "\n";
  out += std::string("syscalls ") +
         (p.syscalls.style == ir::SyscallSpec::Style::DenyList ? "deny-list" : "allow-list") +
         " action " + p.syscalls.action.value.str() + " @" + p.syscalls.action.loc.str() + "\n";
  for (const auto& r : p.syscalls.rules) out += "rule " + dump_rule(r) + "\n";
  for (const auto& k : p.env.keep) out += "keep " + k.value + " @" + k.loc.str() + "\n";
  for (const auto& [k, v] : p.env.set)
    out += "set " + k + "=" + v.value + " @" + v.loc.str() + "\n";
  if (p.timeout)
    out += "timeout " + std::to_string(p.timeout->value.count()) + "ms @" + p.timeout->loc.str() +
           "\n";
  out += std::string("unavailable ") + ir::to_string(p.unavailable.value) + " @" +
         p.unavailable.loc.str() + "\n";
  return out;
}

struct ResolvedDumpOptions {
  bool locations = true;
  // The effective syscall set belongs to the seccomp baseline, not to resolution; tests
  // of resolution leave it out so that they do not restate the baseline.
  bool syscalls = false;
};

inline std::string dump(const ir::Resolved& r, ResolvedDumpOptions opt = {}) {
  std::string out =
      std::string("mode ") + ir::to_string(r.mode) + (r.portable ? " portable" : " bound") + "\n";
  auto paths = [&](const char* what, const auto& v) {
    for (const auto& x : v)
      out += std::string(what) + " " + x.path + " " + ir::to_string(x.kind) +
             (opt.locations ? " @" + x.loc.str() : "") + "\n";
  };
  paths("read", r.read);
  paths("write", r.write);
  paths("pin", r.pin);
  paths("protect", r.protect);
  paths("deny", r.deny);
  out += std::string("network ") + ir::to_string(r.network) + "\n";
  out += std::string("private_tmp ") + (r.private_tmp ? "yes" : "no") + "\n";
  out += "cwd " + r.cwd + "\n";
  if (opt.syscalls) {
    out += "syscalls default " + r.syscalls.default_action.str() + " unknown " +
           r.syscalls.unknown_number_action.str() + " foreign " +
           r.syscalls.foreign_abi_action.str() + "\n";
    for (auto rule : r.syscalls.rules) {
      if (!opt.locations) rule.loc = {};
      out += "rule " + dump_rule(rule) + "\n";
    }
  }
  for (const auto& k : r.env.keep) out += "keep " + k.value + "\n";
  for (const auto& [k, v] : r.env.set) out += "set " + k + "=" + v.value + "\n";
  if (r.timeout) out += "timeout " + std::to_string(r.timeout->count()) + "ms\n";
  out += std::string("unavailable ") + ir::to_string(r.unavailable) + "\n";
  return out;
}

}  // namespace zpolicy::test
