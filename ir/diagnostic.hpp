#pragma once

#include <string>
#include <vector>

#include "ir/source_location.hpp"

namespace zpolicy::ir {

enum class Severity { Note, Warning, Error };

// The one result type of every stage: a parse or binding error (no code), a policy lint
// ("ZP003", docs/lints.md) or a verifier's finding ("verify-linux", "verify-macos").
struct Diagnostic {
  std::string code;
  Severity severity = Severity::Error;
  SourceLoc loc;  // the policy line that decides, or the artifact line at fault
  std::string message;
  std::vector<std::string> trace{};  // the evaluator's reasoning, in order

  // What a finding compares (empty otherwise); its message is made of them (finding()).
  std::string kind{};      // "dropped-deny", "missing-allow", "malformed-artifact", ...
  std::string probe{};     // "write ${HOME}/.ssh/zpolicy-probe"
  std::string expected{};  // what the policy says
  std::string actual{};    // what the artifact does

  bool is_finding() const { return !kind.empty(); }
  // "KIND: PROBE: expected EXPECTED, artifact gives ACTUAL".
  std::string disagreement() const;

  // "policy.yaml:3:5: error: unknown key 'netwrok'; did you mean 'network'? [CODE]" (no
  // " [CODE]" without a code), the gcc/clang shape that editors and CI annotate. On one
  // line whatever text it quotes: a newline or control byte in the location or message is
  // escaped (\n, \t, \xNN), so that text from a policy cannot forge a second diagnostic.
  std::string str() const;
  // As `run` and the verifier report it: unescaped, with " [CODE]" after a lint (a
  // finding's message names its target instead), then one indented line per trace step.
  // Not newline-terminated.
  std::string report() const;
};

// A verifier's finding for `target` ("linux", "macos"): the artifact does not do what the
// policy says on `probe`. Always an error.
Diagnostic finding(const std::string& target, std::string kind, SourceLoc loc, std::string probe,
                   std::string expected, std::string actual, std::vector<std::string> trace = {});

// The error convention of every stage: a function that can fail returns what it made (or
// nullopt) and appends the located reasons to a Diagnostics it is given.
class Diagnostics {
 public:
  void error(SourceLoc loc, std::string message);
  void warning(SourceLoc loc, std::string message);
  bool has_errors() const;
  const std::vector<Diagnostic>& all() const { return items_; }
  std::string str() const;  // one line per diagnostic, newline-terminated

 private:
  std::vector<Diagnostic> items_;
};

const char* to_string(Severity s);

}  // namespace zpolicy::ir
