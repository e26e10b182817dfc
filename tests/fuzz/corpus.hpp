#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fuzz/mutator.hpp"

namespace zpolicy::fuzz {

// The inputs zpolicy reads from a user or a repository, one per kind. Appended kinds keep
// the others' inputs: a kind's number is part of its generator's seed (rng_for).
enum class Kind { Policy, Bwrap, Seccomp, Sbpl, Oci, GitIndex };
inline constexpr Kind kAllKinds[] = {Kind::Policy, Kind::Bwrap, Kind::Seccomp,
                                     Kind::Sbpl,   Kind::Oci,   Kind::GitIndex};

const char* to_string(Kind k);
std::optional<Kind> parse_kind(std::string_view name);

// One file of a golden artifact set, or a policy, or an OCI profile: what is mutated.
// `policy` names the golden policy an artifact is verified against ("default" for
// golden/default.yaml); `role` is the file's name in its set ("bwrap.args",
// "profile.sb", "params.txt", "policy.yaml", "oci.json", "index" for a git index with
// SHA-1 names, "index-sha256" for one with SHA-256 names).
struct Seed {
  std::string policy;
  std::string role;
  std::string bytes;
};

// One input to run: a mutated seed. `file_name` says how to save it so that --replay
// knows its kind, role and policy again: "<stem>.<policy>.<extension>".
struct Input {
  Kind kind = Kind::Policy;
  std::string policy;
  std::string role;
  std::string bytes;
};

Grammar grammar_of(const std::string& role);
std::string file_name(const Input& input, const std::string& stem);

// The golden policies with their compiled artifacts (golden/), the OCI profile of the
// tests (tests/data/), and the extra seeds of tests/fuzz/seeds/.
class Corpus {
 public:
  explicit Corpus(const std::string& source_dir);

  const std::vector<Seed>& seeds(Kind k) const { return seeds_.at(k); }
  // The golden policy's text and its artifacts for `target` ("linux", "macos").
  const std::string& policy_text(const std::string& policy) const;
  const std::string& artifact(const std::string& policy, const std::string& name) const;
  // The shared indexes a split index seed names (tests/fuzz/seeds/sharedindex.HASH), by
  // file name: written beside every git index input, so that its `link` extension leads
  // to one.
  const std::map<std::string, std::string>& shared_indexes() const { return shared_indexes_; }

  // Iteration `iteration` of a run with `seed`: a seed of the kind, mutated.
  Input generate(Kind kind, uint64_t seed, uint64_t iteration) const;
  // The same, with one large hostile edit, for the budget bench.
  Input generate_hostile(Kind kind, uint64_t seed, uint64_t iteration) const;

  // The input a saved file holds: its extension gives the kind and role, the name's
  // last part before it the golden policy ("default" when that is no golden name), or
  // `policy` when given. nullopt for an extension no kind has.
  std::optional<Input> input_from_file(const std::string& path, const std::string& bytes,
                                       const std::optional<std::string>& policy) const;

 private:
  std::map<Kind, std::vector<Seed>> seeds_;
  std::map<std::string, std::string> policies_;
  std::map<std::string, std::string> artifacts_;  // "default/bwrap.args" -> bytes
  std::map<std::string, std::string> shared_indexes_;
};

}  // namespace zpolicy::fuzz
