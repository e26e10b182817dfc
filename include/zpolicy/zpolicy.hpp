#pragma once

// libzpolicy's C++ API: value types only, no third-party headers. Everything the
// command line does goes through these calls (DESIGN.md "Pipeline": one way through).
// The C API for other languages is zpolicy.h.

#include <optional>
#include <string>
#include <vector>

#include "zpolicy/exit_code.hpp"
#include "zpolicy/version.hpp"

#if defined(_WIN32)
#define ZPOLICY_API
#else
#define ZPOLICY_API __attribute__((visibility("default")))
#endif

namespace zpolicy {

enum class Severity { Note, Warning, Error };

// The one result type of every stage: a parse error (code ""), a policy lint ("ZP003"),
// a verification finding ("verify-linux", "verify-macos": a dropped deny, with the
// evaluator's trace).
struct ZPOLICY_API Diagnostic {
  std::string code;
  Severity severity = Severity::Error;
  std::string file;  // the policy file (or "<builtin>", "<command line>")
  int line = 0;      // 1-based; 0 when the diagnostic has no position
  int column = 0;
  std::string message;
  std::vector<std::string> trace;

  // "file:line:col: error: message [code]", then one indented line per trace step.
  std::string str() const;
};

enum class Target { Linux, Macos };

// One compiled file: "bwrap.args", "seccomp.bpf", "seccomp.txt" (linux); "profile.sb",
// "params.txt" (macos). DESIGN.md "Command line" describes each.
struct Artifact {
  std::string name;
  std::string content;
  bool binary = false;
};

// What to compile: the policy (a file, YAML text, or the built-in default when both are
// empty), the mode (which may only narrow the policy's ceiling) and the host binding.
struct Request {
  std::optional<std::string> policy_file;
  std::optional<std::string> policy_text;
  std::string policy_name = "<policy>";  // the file name diagnostics give for policy_text
  std::optional<std::string> mode;       // "read-only", "workspace-write"
  std::optional<std::string> workspace;  // bind ${WORKSPACE} etc. to this directory
};

struct Result {
  int exit_code = kExitOk;  // DESIGN.md "Command line": 0, 2 invalid input, 3 dropped deny
  std::vector<Diagnostic> diagnostics;
  std::vector<Artifact> artifacts;  // compile only, and only when exit_code == 0
  bool ok() const { return exit_code == kExitOk; }
};

// The built-in default policy, as YAML.
ZPOLICY_API std::string default_policy_text();

// Compiles and verifies: artifacts only if the independent analyzer finds every deny kept.
ZPOLICY_API Result compile(const Request& request, Target target);

// Verifies artifacts compiled elsewhere (checked in, edited by hand) against the policy.
ZPOLICY_API Result verify(const Request& request, Target target,
                          const std::vector<Artifact>& artifacts);

// Lints the policy and verifies every target in every confined mode its ceiling admits.
// Error-level diagnostics give exit code 3.
ZPOLICY_API Result check(const Request& request);

}  // namespace zpolicy
