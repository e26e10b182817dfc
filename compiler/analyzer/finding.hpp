#pragma once

#include <string>
#include <vector>

#include "ir/source_location.hpp"

namespace zpolicy::compiler {

// One disagreement between an artifact and the policy, found by a verifier that does
// not trust the emitter. Shared by every target's verifier.
struct Finding {
  std::string target;  // "linux", "macos"
  // "dropped-deny", "missing-allow", "malformed-artifact" or "missing-hardening"
  std::string kind;
  ir::SourceLoc rule;  // the policy line that decides (or the artifact line at fault)
  std::string probe;   // "write ${HOME}/.ssh/zpolicy-probe"
  std::string expected;
  std::string actual;
  std::vector<std::string> trace;  // the evaluator's reasoning, in order

  // "policy.yaml:7:5: error: linux: dropped-deny: read ${HOME}/.ssh: expected ...,
  // artifact gives ..." followed by one indented line per trace step.
  std::string str() const;
};

}  // namespace zpolicy::compiler
