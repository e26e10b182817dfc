#pragma once

// The golden policies (golden/*.yaml), compiled in-process the way `zpolicy compile`
// compiles them (portable), for tests that mutate their artifacts.
#include <algorithm>
#include <filesystem>
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

inline std::vector<GoldenCompile> golden_compiles(compiler::Target target) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(ZPOLICY_SOURCE_DIR) + "/golden"))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<GoldenCompile> out;
  for (const auto& f : files) {
    ir::Diagnostics diags;
    auto policy = compiler::load_policy_file(f, diags);
    if (!policy) continue;
    auto c = compiler::compile(*policy, target, policy->mode.value, std::nullopt, diags);
    if (c) out.push_back({std::filesystem::path(f).stem().string(), std::move(*c)});
  }
  return out;
}

}  // namespace zpolicy::test
