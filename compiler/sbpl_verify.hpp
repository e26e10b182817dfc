#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/resolved.hpp"
#include "ir/source_location.hpp"

// Checks a Seatbelt profile against the policy it claims to implement, without trusting
// the emitter: probes are derived from the IR alone and answered by compiler/sbpl_evaluator.
namespace zpolicy::compiler {

// What the policy says about one (operation, target).
enum class SbplIntent { Allow, Deny, Unspecified };

struct SbplProbe {
  std::string operation;  // a concrete Seatbelt operation: "file-write-create", ...
  std::string target;     // see decide() in sbpl_evaluator.hpp
  SbplIntent intent = SbplIntent::Unspecified;
  ir::SourceLoc loc;  // the policy line that decides the intent
  std::string why;    // "protected path ${WORKSPACE}/.git"
};

// Every root, protected and deny path, their parents, children and ancestors, siblings
// that share a prefix (".git" vs ".github"), paths outside all roots, the network
// (loopback, remote, a unix socket), exec, fork and signals. Sorted, no duplicates.
std::vector<SbplProbe> sbpl_probes(const ir::Resolved& policy);

struct SbplFinding {
  enum class Kind {
    BadProfile,    // not parseable, or outside the emitted subset
    BadParams,     // a referenced parameter is undefined, or a value is malformed
    NotCanonical,  // a bound path goes through /tmp, /var or /etc, macOS symlinks that
                   // Seatbelt sees resolved: a rule on it would never apply. Expected
                   // when a macOS profile is bound on another OS; an error on macOS.
    DroppedDeny,   // the policy denies, the profile allows (under some model)
    MissingAllow,  // the policy allows, the profile denies (under some model)
    Ambiguous,     // the answer depends on how Seatbelt orders overlapping rules
  };
  Kind kind = Kind::BadProfile;
  ir::SourceLoc loc;
  std::string operation;
  std::string probe;
  std::string message;
  std::string trace;  // the evaluator's answer under each model that disagrees

  // "policy.yaml:12:5: error: macos: dropped deny: file-write-create ${WORKSPACE}/.git
  //  (protected path ...) is allowed; last-match/...: allowed by rule 14 ..."
  std::string str() const;
};

const char* to_string(SbplFinding::Kind k);

// Empty when the profile does exactly what the policy says on every probe, under every
// precedence model.
std::vector<SbplFinding> verify_sbpl(
    const ir::Resolved& policy, std::string_view profile_text,
    const std::vector<std::pair<std::string, std::string>>& params);

// `zpolicy explain` for the macOS target: what the policy says about one file operation
// on one path, and what the profile does under each model.
struct SbplExplanation {
  SbplProbe policy;           // the policy's intent, its rule and line
  bool allowed = false;       // the profile's answer (last-match reading)
  bool models_agree = false;  // every precedence and subpath reading gives `allowed`
  std::string trace;          // the profile's deciding rule, per distinct answer
};

// `operation` is "read" (file-read-data), "write" (file-write-data), "create"
// (file-write-create) or a concrete Seatbelt file operation. nullopt and `error` set when
// the profile does not parse, a parameter is missing, or the operation is unknown.
std::optional<SbplExplanation> explain_sbpl(
    const ir::Resolved& policy, std::string_view profile_text,
    const std::vector<std::pair<std::string, std::string>>& params, std::string_view operation,
    std::string_view path, std::string* error);

// Reads a `params.txt` artifact (NAME=VALUE per line). nullopt and `error` set on a line
// without '=', an empty or duplicate name.
std::optional<std::vector<std::pair<std::string, std::string>>> parse_params_text(
    std::string_view text, std::string* error);

}  // namespace zpolicy::compiler
