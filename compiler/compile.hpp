#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/resolve.hpp"
#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

enum class Target { Linux, Macos };
std::optional<Target> parse_target(const std::string& s);
const char* to_string(Target t);

// One compiled artifact file (DESIGN.md "Artifact files").
struct Artifact {
  std::string name;
  std::string content;
  bool binary = false;
};

// Emits every artifact of a target from a resolved policy. Pure.
std::vector<Artifact> emit_artifacts(const ir::Resolved& r, Target target);

// policy -> resolved (portable, or bound to `host`) -> artifacts. Confined modes only;
// danger-full-access has nothing to compile and is reported as an error.
std::optional<std::vector<Artifact>> compile(const ir::Policy& policy, Target target,
                                             ir::Mode mode, const std::optional<HostFacts>& host,
                                             ir::Diagnostics& diags);

}  // namespace zpolicy::compiler
