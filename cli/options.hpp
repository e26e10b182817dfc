#pragma once

#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "zpolicy/zpolicy.hpp"

namespace zpolicy::cli {

namespace po = boost::program_options;

// Parses a subcommand's arguments; on a usage error prints it and the help text and
// returns false (the caller exits 2). `--help` prints help and sets `help_shown`.
bool parse_options(const Args& args, const std::string& usage, po::options_description& opts,
                   const po::positional_options_description& positional, po::variables_map& vm,
                   bool& help_shown);

// The request compile, verify, check and explain work on: POLICY, --mode, --workspace.
Request request_of(const po::variables_map& vm);

// A usage error found by the command line itself, worded as the API words its own.
Diagnostic usage_error(std::string message);

// Prints diagnostics to stderr, one per line (Diagnostic::str()).
void print_diagnostics(const std::vector<Diagnostic>& diags);

// Prints the verification findings among `diags` to stderr as the pipeline words them
// ("file:line:col: error: linux: ...", then the trace and a blank line), then how many
// there were and `consequence` ("; nothing was written").
void print_findings(const std::vector<Diagnostic>& diags, const std::string& consequence);

}  // namespace zpolicy::cli
