#include "cli/status_file_location.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <cstdio>
#include <sstream>
#include <vector>

namespace zpolicy::cli {
namespace {

// One line of /proc/self/mountinfo: the filesystem (device), the directory of it that is
// mounted (root) and where (point).
struct Mount {
  unsigned major = 0, minor = 0;
  std::string root, point;
};

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto octal = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '7'; };
    if (s[i] == '\\' && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<Mount> mounts() {
  std::vector<Mount> out;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    if (!(fields >> id >> parent >> dev >> root >> point)) continue;
    Mount m;
    if (std::sscanf(dev.c_str(), "%u:%u", &m.major, &m.minor) != 2) continue;
    m.root = unescape(root);
    m.point = unescape(point);
    out.push_back(std::move(m));
  }
  return out;
}

// Whether canonical `path` is `dir` or lies below it.
bool at_or_below(const std::string& path, const std::string& dir) {
  return path == dir || dir == "/" || path.starts_with(dir + "/");
}

// The mount that shows canonical `path` (the deepest mount point on its way; of several
// at one point, the last mounted) and the path of `path` within that filesystem.
std::pair<const Mount*, std::string> locate(const std::vector<Mount>& table, const std::string& path) {
  const Mount* best = nullptr;
  for (const Mount& m : table)
    if (at_or_below(path, m.point) && (!best || m.point.size() >= best->point.size())) best = &m;
  if (!best) return {nullptr, ""};
  std::string rest = path.substr(best->point == "/" ? 0 : best->point.size());
  std::string in_fs = best->root == "/" ? (rest.empty() ? "/" : rest) : best->root + rest;
  return {best, in_fs};
}

}  // namespace

std::string writable_root_holding(const Plan& plan, const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  char real[PATH_MAX];
  if (!realpath(dir.c_str(), real)) return "";
  std::vector<std::pair<const PlanBind*, std::string>> writable;  // bind, its sandbox path
  for (const auto& check : plan.setup_checks) {
    if (check.kind != "bind" || check.read_only || !check.fd) continue;
    for (const auto& bind : plan.binds)
      if (bind.fd == *check.fd) writable.emplace_back(&bind, check.path);
  }
  for (std::string cur = real;; cur = cur.substr(0, std::max<size_t>(cur.rfind('/'), 1))) {
    struct stat st {};
    if (stat(cur.c_str(), &st) == 0)
      for (const auto& [bind, inside] : writable)
        if (bind->dev == st.st_dev && bind->ino == st.st_ino) return inside;
    if (cur == "/") break;
  }
  const auto table = mounts();
  const auto [home, in_fs] = locate(table, real);
  if (!home) return "";
  for (const auto& [bind, inside] : writable) {
    char source[PATH_MAX];
    if (!realpath(bind->path.c_str(), source)) continue;
    // The bind's own region of its filesystem, and every mount below it.
    const auto [bind_mount, bind_in_fs] = locate(table, source);
    if (bind_mount && bind_mount->major == home->major && bind_mount->minor == home->minor &&
        at_or_below(in_fs, bind_in_fs))
      return inside;
    for (const Mount& m : table)
      if (m.point != source && at_or_below(m.point, source) && m.major == home->major &&
          m.minor == home->minor && at_or_below(in_fs, m.root))
        return inside;
  }
  return "";
}

}  // namespace zpolicy::cli
