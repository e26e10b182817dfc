#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/analyzer/intent.hpp"
#include "ir/diagnostic.hpp"
#include "ir/result.hpp"
#include "ir/resolved.hpp"
#include "ir/source_location.hpp"

// Checks a Seatbelt profile against the policy it claims to implement, without trusting
// the emitter: probes are derived from the IR alone and answered by sbpl_evaluator.hpp.
namespace zpolicy::compiler {

// What the policy says about one (operation, target), as compiler/analyzer/intent.hpp
// reads it for macOS.
struct SbplProbe {
  std::string operation;  // a concrete Seatbelt operation: "file-write-create", ...
  std::string target;     // see decide() in sbpl_evaluator.hpp
  Expect intent = Expect::Either;
  ir::SourceLoc loc;  // the policy line that decides the intent
  std::string why;    // "under protected path ${WORKSPACE}/.git"
};

// Every root, protected and deny path, their parents, children and ancestors, siblings
// that share a prefix (".git" vs ".github"), paths outside all roots, the network
// (loopback, remote, a unix socket), exec, fork and signals. Deterministic order (file
// probes sorted by path), no duplicates.
std::vector<SbplProbe> sbpl_probes(const ir::Resolved& policy);

// The NAME=VALUE pairs of a params.txt, in file order; views of the text they were read
// from, so reading them costs no copy per line.
using SbplParamList = std::vector<std::pair<std::string_view, std::string_view>>;

// The findings of the SBPL verifier are ir::finding()s for target "macos", of kinds
// "malformed-artifact" (the profile does not parse or leaves the emitted subset; a
// parameter is undefined, defined twice, or not a normalized path), "not-canonical" (a
// bound path goes through /tmp, /var or /etc, macOS symlinks that Seatbelt sees resolved,
// so a rule on it would never apply: expected when a macOS profile is bound on another OS),
// "dropped-deny" and "missing-allow" (the policy denies and the profile allows, or the
// reverse, under some model) and "ambiguous-precedence" (the answer depends on how
// Seatbelt orders overlapping rules).

// How far a portable profile is proven beyond its symbolic reading (docs/verify.md,
// "Portable profiles"): with each symbolic root bound alone to each place a concrete path
// of the profile makes, and with `EveryNesting` also with each bound inside each other
// ("Nested symbolic roots": several proofs more, for `zpolicy verify` of artifacts made
// elsewhere; the profiles `compile` emits are held to it by the tests).
enum class SbplBindings { EachRootAlone, EveryNesting };

// Each policy path no Seatbelt check can name (longer than kSbplMaxPathBytes, macOS
// MAXPATHLEN), refused where the policy writes it. Depends on the policy alone, so
// `compile` asks it before emitting: a profile names every ancestor of a deep path, so
// emitting one costs the square of its depth (issue 19 §2).
std::vector<ir::Diagnostic> unnameable_policy_paths(const ir::Resolved& policy);

// Empty when the profile does exactly what the policy says on every probe, under every
// precedence model. Begins with unnameable_policy_paths().
std::vector<ir::Diagnostic> verify_sbpl(const ir::Resolved& policy, std::string_view profile_text,
                                     const SbplParamList& params,
                                     SbplBindings bindings = SbplBindings::EachRootAlone);

// `zpolicy explain` for the macOS target: what the policy says about one file operation
// on one path, and what the profile does under each model.
struct SbplExplanation {
  SbplProbe policy;                // the policy's intent, its rule and line
  bool allowed = false;            // the profile's answer (last-match reading)
  bool models_agree = false;       // every precedence and subpath reading gives `allowed`
  std::vector<std::string> trace;  // the deciding rule, one line per distinct answer
};

// `operation` is "read" (file-read-data), "write" (file-write-data), "create"
// (file-write-create) or a concrete Seatbelt file operation. An error, whose message says
// where, when the profile does not parse, a parameter is missing, or the operation is
// unknown.
ir::Result<SbplExplanation> explain_sbpl(const ir::Resolved& policy, std::string_view profile_text,
                                         const SbplParamList& params, std::string_view operation,
                                         std::string_view path);

// Reads a `params.txt` artifact (NAME=VALUE per line). An error ("params.txt:LINE: why")
// on a line without '=', an empty or duplicate name. The list views `text`, which must
// outlive it.
ir::Result<SbplParamList> parse_params_text(std::string_view text);

}  // namespace zpolicy::compiler
