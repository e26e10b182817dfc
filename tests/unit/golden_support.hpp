#pragma once

// The golden policies (golden/*.yaml), compiled in-process the way `zpolicy compile`
// compiles them (portable), for tests that mutate their artifacts.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/pipeline.hpp"
#include "compiler/frontend/policy_parser.hpp"

namespace zpolicy::test {

struct GoldenCompile {
  std::string name;
  compiler::Compiled compiled;
  std::string artifact(const std::string& file) const {
    for (const auto& a : compiled.artifacts)
      if (a.name == file) return a.content;
    return {};
  }
};

// Every golden/*.yaml, sorted. Throws when there is none, so that a test looping over
// them can never pass by looping over nothing.
inline std::vector<std::filesystem::path> golden_policy_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(ZPOLICY_SOURCE_DIR) + "/golden"))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error("no golden policies in " ZPOLICY_SOURCE_DIR "/golden");
  return files;
}

// Every golden policy compiled for `target`. A golden that does not load or compile
// throws with its diagnostics: dropping it would let the tests over it pass untested.
inline std::vector<GoldenCompile> golden_compiles(compiler::Target target) {
  std::vector<GoldenCompile> out;
  for (const auto& f : golden_policy_files()) {
    ir::Diagnostics diags;
    auto policy = compiler::load_policy_file(f.string(), diags);
    std::optional<compiler::Compiled> c;
    if (policy) c = compiler::compile(*policy, target, policy->mode.value, std::nullopt, diags);
    if (!c || diags.has_errors())
      throw std::runtime_error("golden " + f.string() + " does not compile for " +
                               compiler::to_string(target) + ":\n" + diags.str());
    out.push_back({f.stem().string(), std::move(*c)});
  }
  return out;
}

}  // namespace zpolicy::test
