#pragma once

// What every entry point of the public API does first: turn a Request into the policy,
// the effective mode and the host binding, and turn the pipeline's results into the
// public Diagnostic. Internal to api/.

#include <optional>
#include <string>
#include <vector>

#include "compiler/pipeline.hpp"
#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"
#include "zpolicy/zpolicy.hpp"

namespace zpolicy::api {

Severity severity_of(ir::Severity s);
ir::Severity severity_of(Severity s);

Diagnostic diagnostic_of(const ir::Diagnostic& d);
void add_all(std::vector<Diagnostic>& out, const ir::Diagnostics& diags);
PolicyLine line_of(const ir::SourceLoc& loc);

compiler::Target target_of(Target t);

struct Loaded {
  ir::Policy policy;
  ir::Mode mode;
  std::optional<compiler::HostFacts> host;
};

// The mode a request names (`--mode`): nullopt when it names none, or names no mode (then
// with the reason appended to `diags`).
std::optional<ir::Mode> requested_mode(const std::optional<std::string>& name,
                                       ir::Diagnostics& diags);

// The policy, its effective mode and the host binding, or the located reasons why not
// (appended to `diags`). The mode is checked first, then the policy is loaded, bound and
// its ceiling compared with the mode, as the command line reports them. Every entry point
// that takes a policy loads it here, and nowhere else.
std::optional<Loaded> load_request(const Request& req, ir::Diagnostics& diags);

}  // namespace zpolicy::api
