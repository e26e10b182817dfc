#include "tests/fuzz/corpus.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace zpolicy::fuzz {
namespace {

namespace fs = std::filesystem;

struct Role {
  const char* role;
  const char* extension;
  Kind kind;
};
constexpr Role kRoles[] = {
    {"policy.yaml", "yaml", Kind::Policy}, {"bwrap.args", "args", Kind::Bwrap},
    {"seccomp.bpf", "bpf", Kind::Seccomp}, {"profile.sb", "sb", Kind::Sbpl},
    {"params.txt", "params", Kind::Sbpl},  {"oci.json", "json", Kind::Oci},
    {"index", "index", Kind::GitIndex},    {"index-sha256", "index256", Kind::GitIndex}};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read seed " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Directory entries in name order, so that seed numbers are the same on every machine.
std::vector<fs::path> sorted(const fs::path& dir, const std::string& extension) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == extension) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> donors_of(const std::vector<Seed>& seeds, const std::string& role) {
  std::vector<std::string> out;
  for (const auto& s : seeds)
    if (s.role == role) out.push_back(s.bytes);
  return out;
}

}  // namespace

const char* to_string(Kind k) {
  switch (k) {
    case Kind::Policy:
      return "policy";
    case Kind::Bwrap:
      return "bwrap";
    case Kind::Seccomp:
      return "seccomp";
    case Kind::Sbpl:
      return "sbpl";
    case Kind::Oci:
      return "oci";
    case Kind::GitIndex:
      return "git-index";
  }
  return "?";
}

std::optional<Kind> parse_kind(std::string_view name) {
  for (Kind k : kAllKinds)
    if (name == to_string(k)) return k;
  return std::nullopt;
}

Grammar grammar_of(const std::string& role) {
  if (role == "bwrap.args") return Grammar::Argv;
  if (role == "seccomp.bpf") return Grammar::Bpf;
  if (role == "profile.sb") return Grammar::Sexpr;
  if (role == "params.txt") return Grammar::Params;
  if (role == "oci.json") return Grammar::Json;
  if (role == "index" || role == "index-sha256") return Grammar::GitIndex;
  return Grammar::Yaml;
}

std::string file_name(const Input& input, const std::string& stem) {
  std::string name = stem;
  if (!input.policy.empty()) name += "." + input.policy;
  for (const auto& r : kRoles)
    if (input.role == r.role) return name + "." + r.extension;
  return name;
}

Corpus::Corpus(const std::string& source_dir) {
  const fs::path root(source_dir);
  for (Kind k : kAllKinds) seeds_[k];
  for (const auto& yaml : sorted(root / "golden", ".yaml")) {
    const std::string name = yaml.stem().string();
    policies_[name] = read_file(yaml);
    seeds_[Kind::Policy].push_back({"", "policy.yaml", policies_[name]});
    for (const char* role : {"bwrap.args", "seccomp.bpf", "seccomp.txt"})
      artifacts_[name + "/" + role] = read_file(root / "golden" / (name + ".linux") / role);
    for (const char* role : {"profile.sb", "params.txt"})
      artifacts_[name + "/" + role] = read_file(root / "golden" / (name + ".macos") / role);
    seeds_[Kind::Bwrap].push_back({name, "bwrap.args", artifacts_[name + "/bwrap.args"]});
    seeds_[Kind::Seccomp].push_back({name, "seccomp.bpf", artifacts_[name + "/seccomp.bpf"]});
    seeds_[Kind::Sbpl].push_back({name, "profile.sb", artifacts_[name + "/profile.sb"]});
    seeds_[Kind::Sbpl].push_back({name, "params.txt", artifacts_[name + "/params.txt"]});
  }
  if (policies_.count("default") == 0)
    throw std::runtime_error("no golden/default.yaml under " + source_dir);
  seeds_[Kind::Oci].push_back(
      {"", "oci.json", read_file(root / "tests" / "data" / "moby-default-seccomp.json")});
  for (const auto& p : sorted(root / "tests" / "fuzz" / "seeds", ".yaml"))
    seeds_[Kind::Policy].push_back({"", "policy.yaml", read_file(p)});
  for (const auto& p : sorted(root / "tests" / "fuzz" / "seeds", ".json"))
    seeds_[Kind::Oci].push_back({"", "oci.json", read_file(p)});
  for (const auto& p : sorted(root / "tests" / "fuzz" / "seeds", ".index"))
    seeds_[Kind::GitIndex].push_back({"", "index", read_file(p)});
  for (const auto& p : sorted(root / "tests" / "fuzz" / "seeds", ".index256"))
    seeds_[Kind::GitIndex].push_back({"", "index-sha256", read_file(p)});
  if (seeds_[Kind::GitIndex].empty())
    throw std::runtime_error("no git index seeds under " + source_dir + "/tests/fuzz/seeds");
  for (const auto& e : fs::directory_iterator(root / "tests" / "fuzz" / "seeds"))
    if (e.path().filename().string().starts_with("sharedindex."))
      shared_indexes_[e.path().filename().string()] = read_file(e.path());
}

const std::string& Corpus::policy_text(const std::string& policy) const {
  return policies_.at(policy);
}

const std::string& Corpus::artifact(const std::string& policy, const std::string& name) const {
  return artifacts_.at(policy + "/" + name);
}

Input Corpus::generate(Kind kind, uint64_t seed, uint64_t iteration) const {
  Rng rng = rng_for(seed, static_cast<uint64_t>(kind), iteration);
  const auto& all = seeds(kind);
  const Seed& s = all[rng.below(all.size())];
  const auto donors = donors_of(all, s.role);
  return {kind, s.policy, s.role, mutate(s.bytes, grammar_of(s.role), donors, rng)};
}

Input Corpus::generate_hostile(Kind kind, uint64_t seed, uint64_t iteration) const {
  Rng rng = rng_for(seed, static_cast<uint64_t>(kind) + 16, iteration);
  const auto& all = seeds(kind);
  const Seed& s = all[rng.below(all.size())];
  return {kind, s.policy, s.role, mutate_hostile(s.bytes, grammar_of(s.role), 64 * 1024, rng)};
}

std::optional<Input> Corpus::input_from_file(const std::string& path, const std::string& bytes,
                                             const std::optional<std::string>& policy) const {
  const fs::path p(path);
  const std::string ext = p.extension().string();
  for (const auto& r : kRoles) {
    if (ext != std::string(".") + r.extension) continue;
    Input in{r.kind, "", r.role, bytes};
    if (r.kind == Kind::Policy || r.kind == Kind::Oci || r.kind == Kind::GitIndex) return in;
    const std::string named = p.stem().extension().string();
    in.policy = policy                                                   ? *policy
                : named.size() > 1 && policies_.count(named.substr(1)) ? named.substr(1)
                                                                       : "default";
    return in;
  }
  return std::nullopt;
}

}  // namespace zpolicy::fuzz
