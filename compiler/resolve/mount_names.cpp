#include "compiler/resolve/mount_names.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <tuple>

#include "ir/path.hpp"

namespace zpolicy::compiler {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(std::string_view s) {
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && s.size() - i >= 4 && octal(s[i + 1]) && octal(s[i + 2]) &&
        octal(s[i + 3])) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// `base` joined with what `path` has below `prefix` (path lies within prefix).
std::string rebase(const std::string& path, const std::string& prefix, const std::string& base) {
  const std::string rest = prefix == "/" ? path : path.substr(prefix.size());
  if (rest.empty() || rest == "/") return base;
  return base == "/" ? rest : base + rest;
}

// Every name the directory `fs_path` of `device` shows at.
std::vector<std::string> names_of(const std::string& device, const std::string& fs_path,
                                  const std::vector<MountEntry>& mounts) {
  std::vector<std::string> out;
  for (const auto& m : mounts)
    if (m.device == device && ir::path_within(m.root, fs_path))
      out.push_back(rebase(fs_path, m.root, m.point));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
  // Split by hand: this runs on every `run` (the bound lints), and a stream per line cost
  // most of the lint's time.
  std::vector<MountEntry> out;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    std::string_view fields[6];
    size_t n = 0;
    auto next = [&line] {
      while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      const size_t space = std::min(line.find(' '), line.size());
      const std::string_view field = line.substr(0, space);
      line.remove_prefix(space);
      return field;
    };
    while (n < 6 && !line.empty())
      if (const auto f = next(); !f.empty()) fields[n++] = f;
    if (n < 6) continue;
    MountEntry e;
    e.id = fields[0];
    e.parent = fields[1];
    e.device = fields[2];
    e.root = unescape(fields[3]);
    e.point = unescape(fields[4]);
    if (e.root.empty() || e.root[0] != '/' || e.point.empty() || e.point[0] != '/') continue;
    for (std::string_view opts = fields[5]; !opts.empty();) {
      const size_t comma = std::min(opts.find(','), opts.size());
      if (opts.substr(0, comma) == "ro") e.read_only = true;
      opts.remove_prefix(std::min(comma + 1, opts.size()));
    }
    // The optional fields end at a lone "-" (none of them is one; every field is escaped).
    // After it, one space each: type, source (empty when mounted with ""), superblock options.
    for (std::string_view f = next(); !f.empty(); f = next())
      if (f == "-") {
        if (!line.empty()) line.remove_prefix(1);
        std::string* tail[] = {&e.fs_type, &e.source, &e.super_options};
        for (std::string* field : tail) {
          const size_t space = std::min(line.find(' '), line.size());
          *field = unescape(line.substr(0, space));
          line.remove_prefix(std::min(space + 1, line.size()));
        }
        break;
      }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<MountEntry> read_mountinfo() {
  std::ifstream in("/proc/self/mountinfo");
  return parse_mountinfo(std::string(std::istreambuf_iterator<char>(in), {}));
}

bool same_mount(const MountEntry& a, const MountEntry& b) {
  return a.device == b.device && a.root == b.root && a.fs_type == b.fs_type &&
         a.source == b.source && a.super_options == b.super_options;
}

bool same_layout(const std::vector<MountEntry>& a, const std::vector<MountEntry>& b) {
  // Each mount as what it shows where, with what it was mounted on (the parent's own
  // four): ids differ between the namespaces, and so does the order (a copy lists its
  // mounts tree first, the original in the order they were made), but the stacking of
  // mounts on one point is a parent relation in both.
  using Shape = std::tuple<std::string, std::string, std::string, bool, std::string, std::string,
                           std::string>;
  auto shape = [](const MountEntry& e) {
    return Shape{e.device, e.root, e.point, e.read_only, e.fs_type, e.source, e.super_options};
  };
  auto shapes = [&shape](const std::vector<MountEntry>& t) {
    std::map<std::string, const MountEntry*> by_id;
    for (const auto& e : t) by_id.emplace(e.id, &e);
    std::vector<std::pair<Shape, Shape>> out;
    for (const auto& e : t) {
      const auto p = by_id.find(e.parent);
      out.push_back({shape(e), p == by_id.end() ? Shape{} : shape(*p->second)});
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  return a.size() == b.size() && shapes(a) == shapes(b);
}

MountShowing mount_showing(const std::string& path, const std::vector<MountEntry>& mounts) {
  // Whether mounts[i] is covered: a later mount at or above its point that is not one of its
  // ancestors (those it was mounted on) hides it, though the table still lists it.
  auto covered = [&](size_t i) {
    std::vector<const std::string*> ancestors;
    for (const std::string* id = &mounts[i].parent; ancestors.size() < mounts.size();) {
      auto p = std::find_if(mounts.begin(), mounts.end(),
                            [&](const MountEntry& e) { return e.id == *id; });
      if (p == mounts.end() ||
          std::find(ancestors.begin(), ancestors.end(), &p->id) != ancestors.end())
        break;
      ancestors.push_back(&p->id);
      id = &p->parent;
    }
    for (size_t j = i + 1; j < mounts.size(); ++j)
      if (ir::path_within(mounts[j].point, mounts[i].point) &&
          std::none_of(ancestors.begin(), ancestors.end(),
                       [&](const std::string* a) { return *a == mounts[j].id; }))
        return true;
    return false;
  };
  MountShowing out;
  for (size_t i = 0; i < mounts.size(); ++i) {
    const auto& m = mounts[i];
    if (ir::path_within(m.point, path) &&
        (!out.mount || m.point.size() >= out.mount->point.size()) && !covered(i))
      out.mount = &m;
  }
  if (out.mount) out.in_fs = rebase(path, out.mount->point, out.mount->root);
  return out;
}

std::vector<std::string> other_names(const std::string& path,
                                     const std::vector<MountEntry>& mounts) {
  const auto [m, in_fs] = mount_showing(path, mounts);
  if (!m) return {};
  auto names = names_of(m->device, in_fs, mounts);
  std::erase(names, path);
  return names;
}

std::vector<MountAlias> mount_aliases(const std::string& path,
                                      const std::vector<MountEntry>& mounts) {
  std::vector<MountAlias> out;
  for (auto& name : other_names(path, mounts)) out.push_back({std::move(name), path});
  const auto [m, in_fs] = mount_showing(path, mounts);
  if (!m) return out;
  for (const auto& e : mounts)
    if (e.device == m->device && e.root != in_fs && ir::path_within(in_fs, e.root))
      out.push_back({e.point, rebase(e.root, in_fs, path)});
  // A mount below `path` shows a filesystem of its own there, whose other names the lookup
  // above never meets (red team A11B-1): each, and each part of it mounted elsewhere.
  for (const auto& below : mounts) {
    if (below.point == path || !ir::path_within(path, below.point)) continue;
    for (auto& name : names_of(below.device, below.root, mounts))
      if (name != below.point) out.push_back({std::move(name), below.point});
    for (const auto& e : mounts)
      if (e.device == below.device && e.root != below.root && ir::path_within(below.root, e.root))
        out.push_back({e.point, rebase(e.root, below.root, below.point)});
  }
  return out;
}

std::vector<MountBelow> writable_mounts_below(const std::string& path,
                                              const std::vector<MountEntry>& mounts) {
  std::vector<MountBelow> out;
  for (const auto& m : mounts)
    if (!m.read_only && m.point != path && ir::path_within(path, m.point)) {
      MountBelow b{m.point, names_of(m.device, m.root, mounts)};
      if (std::find(b.names.begin(), b.names.end(), m.point) == b.names.end())
        b.names.push_back(m.point);
      out.push_back(std::move(b));
    }
  return out;
}

}  // namespace zpolicy::compiler
