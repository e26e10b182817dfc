#include "runner/status_file_location.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <cstdio>
#include <sstream>
#include <vector>

namespace zpolicy::runner {
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

// Every directory the kernel looks a name up in to open `path` (made absolute against the
// working directory), as it walks it: ".." applies to what is resolved so far, a
// symlink's target is walked in its place. A symlink on the way lives in its own
// directory, which may lie in a writable root although the file does not: the command
// could point it elsewhere, and a caller reading the status by its name would read that
// (red team R7-S1). Empty when the walk does not end (too many links).
std::vector<std::string> directories_on_the_way(const std::string& path) {
  std::deque<std::string> todo;
  const auto push_front = [&todo](const std::string& p) {
    std::vector<std::string> comps;
    for (size_t pos = 0; pos <= p.size();) {
      size_t next = p.find('/', pos);
      if (next == std::string::npos) next = p.size();
      if (next > pos) comps.push_back(p.substr(pos, next - pos));
      pos = next + 1;
    }
    todo.insert(todo.begin(), comps.begin(), comps.end());
  };
  std::string start = path;
  if (!path.starts_with("/")) {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return {};
    start = std::string(cwd) + "/" + path;
  }
  push_front(start);
  std::vector<std::string> out;
  std::string cur = "/";
  for (int links = 0; !todo.empty();) {
    const std::string c = std::move(todo.front());
    todo.pop_front();
    if (c == ".") continue;
    if (c == "..") {
      cur.erase(std::max<size_t>(cur.rfind('/'), 1));
      continue;
    }
    if (std::find(out.begin(), out.end(), cur) == out.end()) out.push_back(cur);
    std::string next = cur;
    if (next.size() > 1) next += '/';
    next += c;
    struct stat st {};
    if (lstat(next.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      char target[PATH_MAX];
      const ssize_t n = readlink(next.c_str(), target, sizeof target);
      if (n <= 0 || ++links > 40) return {};
      const std::string t(target, static_cast<size_t>(n));
      if (t.starts_with("/")) cur.erase(1);  // back to "/"
      push_front(t);
      continue;
    }
    cur = std::move(next);
  }
  return out;
}

// A writable bind of the plan: its host source, the identity resolution recorded for it,
// and where the sandbox sees it.
struct WritableBind {
  std::string source;
  std::optional<ir::HostIdentity> identity;
  std::string inside;
};

std::vector<WritableBind> writable_binds(const compiler::RunPlan& plan) {
  std::vector<WritableBind> out;
  if (!plan.verified) return out;
  for (const auto& e : plan.expected_setup) {
    if (e.kind != compiler::ExpectedObject::Kind::Bind || e.read_only || !e.source_fd) continue;
    for (const auto& bind : plan.bind_sources)
      if (bind.fd == *e.source_fd)
        out.push_back({bind.path, compiler::recorded_identity(*plan.verified, bind.path), e.dest});
  }
  return out;
}

// The writable bind (its path inside the sandbox) through which the command reaches the
// canonical directory `real`, or empty.
std::string writable_root_showing(const std::vector<WritableBind>& writable,
                                  const std::vector<Mount>& table, const std::string& real) {
  for (std::string cur = real;; cur = cur.substr(0, std::max<size_t>(cur.rfind('/'), 1))) {
    struct stat st {};
    if (stat(cur.c_str(), &st) == 0)
      for (const auto& w : writable)
        if (w.identity && w.identity->dev == st.st_dev && w.identity->ino == st.st_ino)
          return w.inside;
    if (cur == "/") break;
  }
  const auto [home, in_fs] = locate(table, real);
  if (!home) return "";
  for (const auto& [bind_path, identity, inside] : writable) {
    char source[PATH_MAX];
    if (!realpath(bind_path.c_str(), source)) continue;
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

}  // namespace

std::string writable_root_holding(const compiler::RunPlan& plan, const std::string& path) {
  const auto writable = writable_binds(plan);
  // A directory that does not resolve (missing, too many links) holds nothing yet: the
  // status file cannot be opened there either, which refuses the run.
  const auto table = mounts();
  for (const auto& dir : directories_on_the_way(path)) {
    char real[PATH_MAX];
    if (!realpath(dir.c_str(), real)) continue;
    if (auto inside = writable_root_showing(writable, table, real); !inside.empty()) return inside;
  }
  return "";
}

}  // namespace zpolicy::runner
