#include "runner/environment.hpp"

#include <algorithm>
#include <map>

namespace zpolicy::runner {
namespace {

bool kept(const ir::EnvPolicy& policy, const std::string& name) {
  for (const auto& k : policy.keep) {
    const std::string& pat = k.value;
    if (!pat.empty() && pat.back() == '*') {
      if (name.compare(0, pat.size() - 1, pat, 0, pat.size() - 1) == 0) return true;
    } else if (name == pat) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> build_environment(const ir::EnvPolicy& policy,
                                           const compiler::CallerEnvironment& caller) {
  std::map<std::string, std::string> env;
  // Every entry in order, as the command got them before: the last of a name the caller
  // has twice wins.
  for (const auto& entry : caller.entries()) {
    auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string name = entry.substr(0, eq);
    if (kept(policy, name)) env[name] = entry.substr(eq + 1);
  }
  for (const auto& [name, value] : policy.set) env[name] = value.value;
  std::vector<std::string> out;
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

void set_variable(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  const std::string prefix = name + "=";
  auto it = std::find_if(env.begin(), env.end(), [&](const std::string& e) { return e >= prefix; });
  if (it != env.end() && it->starts_with(prefix)) *it = prefix + value;
  else env.insert(it, prefix + value);
}

}  // namespace zpolicy::runner
