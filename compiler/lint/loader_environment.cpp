#include "compiler/lint/loader_environment.hpp"

#include <climits>
#include <cstdlib>
#include <string_view>

#include "ir/path.hpp"

namespace zpolicy::compiler {
namespace {

// The loader's variables that name code, with the characters that separate their entries
// (glibc: LD_PRELOAD by spaces or colons, LD_LIBRARY_PATH by colons or semicolons).
struct LoaderVariable {
  const char* name;
  const char* separators;
};
constexpr LoaderVariable kLoaderVariables[] = {
    {"LD_PRELOAD", " :"}, {"LD_LIBRARY_PATH", ":;"}, {"LD_AUDIT", ":"}};

// `path` canonical as far as it exists: the longest existing prefix resolved, the rest
// appended as spelled.
std::string resolved_prefix(const std::string& path) {
  std::string rest;
  for (std::string cur = path;;) {
    char real[PATH_MAX];
    if (realpath(cur.c_str(), real)) return std::string(real) + rest;
    const auto slash = cur.rfind('/');
    if (slash == std::string::npos || cur == "/") return path;
    rest = cur.substr(slash) + rest;
    cur = slash == 0 ? "/" : cur.substr(0, slash);
  }
}

}  // namespace

std::optional<std::string> loader_reaches_writable_root(const std::vector<std::string>& env,
                                                        const std::vector<std::string>& writable) {
  for (const auto& e : env)
    for (const auto& v : kLoaderVariables) {
      const std::string prefix = std::string(v.name) + "=";
      if (!e.starts_with(prefix)) continue;
      const std::string value = e.substr(prefix.size());
      for (size_t pos = 0; pos <= value.size();) {
        size_t next = value.find_first_of(v.separators, pos);
        if (next == std::string::npos) next = value.size();
        const std::string entry = value.substr(pos, next - pos);
        pos = next + 1;
        // A bare name in LD_PRELOAD or LD_AUDIT is searched on the library path, which is
        // judged as LD_LIBRARY_PATH; anything else not absolute is taken from the backend's
        // working directory, the workspace.
        const bool searched = v.separators[0] == ' ' || std::string_view(v.name) == "LD_AUDIT";
        if (searched && !entry.empty() && entry.find('/') == std::string::npos) continue;
        if (entry.empty() || entry[0] != '/')
          return std::string(v.name) + " holds an empty or relative entry ('" + entry +
                 "'), which names the workspace";
        const std::string real = resolved_prefix(entry);
        for (const auto& root : writable)
          if (ir::path_within(root, real))
            return std::string(v.name) + " names '" + entry + "', inside writable root '" +
                   root + "'";
      }
    }
  return std::nullopt;
}

}  // namespace zpolicy::compiler
