#pragma once

#include <boost/program_options.hpp>
#include <iostream>
#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "zpolicy/exit_code.hpp"
#include "compiler/analyzer/finding.hpp"
#include "compiler/resolve/resolve.hpp"
#include "ir/diagnostic.hpp"
#include "ir/mode.hpp"
#include "ir/policy.hpp"

namespace zpolicy::cli {

namespace po = boost::program_options;

// Parses a subcommand's arguments; on a usage error prints it and the help text and
// returns false (the caller exits 2). `--help` prints help and sets `help_shown`.
bool parse_options(const Args& args, const std::string& usage, po::options_description& opts,
                   const po::positional_options_description& positional, po::variables_map& vm,
                   bool& help_shown);

// Loads --policy / a positional POLICY, or the built-in default when `path` is empty.
std::optional<ir::Policy> load_policy(const std::string& path, ir::Diagnostics& diags);

std::optional<ir::Mode> mode_option(const po::variables_map& vm, ir::Diagnostics& diags);

// Prints diagnostics to stderr, each prefixed by nothing but its location.
void print_diagnostics(const ir::Diagnostics& diags);

// What compile, verify and explain work on: the policy, the mode (--mode, which may only
// narrow the policy's ceiling) and the host binding (--workspace), or located errors.
struct PolicyRequest {
  ir::Policy policy;
  ir::Mode mode;
  std::optional<compiler::HostFacts> host;
};
std::optional<PolicyRequest> load_request(const po::variables_map& vm, ir::Diagnostics& diags);

// Prints verification findings to stderr, then how many there were.
void print_findings(const std::vector<compiler::Finding>& findings);

}  // namespace zpolicy::cli
