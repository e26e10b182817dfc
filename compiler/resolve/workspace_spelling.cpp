#include "compiler/resolve/workspace_spelling.hpp"

#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace zpolicy::compiler {
namespace {

bool only_root_writes(const std::string& dir) {
  struct stat st;
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
         (st.st_mode & 022) == 0;
}

}  // namespace

WorkspaceSpelling walk_workspace_spelling(const std::string& spelled, const std::string& cwd) {
  // `cur` is canonical at every step: the cwd is (the kernel resolved it), and so is every
  // prefix below, since a link other than an accepted one in "/" stops the walk.
  std::string cur = spelled.starts_with("/") ? "/" : cwd;
  std::string as_spelled = spelled.starts_with("/") ? "" : ".";
  std::istringstream parts(spelled);
  for (std::string c; std::getline(parts, c, '/');) {
    if (c.empty() || c == ".") continue;
    as_spelled += "/" + c;
    if (c == "..") {
      cur = cur == "/" ? "/" : cur.substr(0, std::max<size_t>(cur.rfind('/'), 1));
      continue;
    }
    const std::string next = cur == "/" ? "/" + c : cur + "/" + c;
    struct stat st;
    if (lstat(next.c_str(), &st) != 0) return {std::nullopt, next};
    if (!S_ISLNK(st.st_mode)) {
      cur = next;
      continue;
    }
    char target[PATH_MAX];
    if (cur != "/" || st.st_uid != 0 || !only_root_writes("/") || !realpath(next.c_str(), target))
      return {spelled.starts_with("/") ? as_spelled : as_spelled.substr(2), next};
    cur = target;
  }
  return {std::nullopt, cur};
}

namespace {

bool same_directory(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && S_ISDIR(sa.st_mode) &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

std::string lexically_normal(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream in(path);
  for (std::string part; std::getline(in, part, '/');) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  std::string out;
  for (const auto& part : parts) out += "/" + part;
  return out.empty() ? "/" : out;
}

std::string caller_workspace_spelling(const std::optional<std::string>& workspace,
                                      const std::string& canonical,
                                      const std::optional<std::string>& pwd) {
  std::string spelled;
  if (workspace && !workspace->empty() && (*workspace)[0] == '/') {
    spelled = *workspace;
  } else {
    if (!pwd || !pwd->starts_with("/") || !same_directory(*pwd, ".")) return {};
    spelled = *pwd + (workspace ? "/" + *workspace : std::string());
  }
  spelled = lexically_normal(spelled);
  return spelled != canonical && same_directory(spelled, canonical) ? spelled : std::string();
}

}  // namespace zpolicy::compiler
