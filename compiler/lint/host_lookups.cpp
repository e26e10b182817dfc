#include "compiler/lint/host_lookups.hpp"

#include <unistd.h>

#include <climits>
#include <deque>

namespace zpolicy::compiler {
namespace {

std::deque<std::string> components(const std::string& path) {
  std::deque<std::string> out;
  for (size_t pos = 0; pos <= path.size();) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    if (next > pos) out.push_back(path.substr(pos, next - pos));
    pos = next + 1;
  }
  return out;
}

}  // namespace

const struct stat* HostLookups::lstat(const std::string& path) {
  // No name of PATH_MAX bytes or more is looked up (ENAMETOOLONG); not remembered either,
  // or the prefixes of a deep policy path would be copied once each: quadratic (issue 19).
  if (path.size() >= PATH_MAX) return nullptr;
  auto [it, fresh] = lstat_.try_emplace(path);
  if (fresh) {
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0) it->second = st;
  }
  return it->second ? &*it->second : nullptr;
}

std::optional<std::string> HostLookups::readlink(const std::string& path) {
  auto [it, fresh] = link_.try_emplace(path);
  if (fresh) {
    const struct stat* st = lstat(path);
    char target[PATH_MAX];
    ssize_t n;
    if (st && S_ISLNK(st->st_mode) && (n = ::readlink(path.c_str(), target, sizeof target)) > 0)
      it->second = std::string(target, static_cast<size_t>(n));
  }
  return it->second;
}

std::optional<std::string> HostLookups::walk(const std::string& path, bool existing,
                                             std::vector<std::string>* entries) {
  std::deque<std::string> todo = components(path);
  std::string cur = "/";
  int links = 0;
  while (!todo.empty()) {
    std::string c = std::move(todo.front());
    todo.pop_front();
    if (c == ".") continue;
    if (c == "..") {
      cur.erase(std::max<size_t>(cur.rfind('/'), 1));
      continue;
    }
    std::string next = cur;
    if (next.size() > 1) next += '/';
    next += c;
    if (entries) entries->push_back(next);
    const struct stat* st = lstat(next);
    if (!st && existing) return std::nullopt;
    if (st && S_ISLNK(st->st_mode)) {
      auto target = readlink(next);
      if (target && ++links <= 40) {
        auto comps = components(*target);
        todo.insert(todo.begin(), comps.begin(), comps.end());
        if ((*target)[0] == '/') cur.erase(1);  // back to "/"
        continue;
      }
      if (existing) return std::nullopt;
    }
    if (existing && !todo.empty() && !S_ISDIR(st->st_mode)) return std::nullopt;
    cur = std::move(next);
  }
  return cur;
}

std::optional<std::string> HostLookups::realpath(const std::string& path) {
  auto [it, fresh] = real_.try_emplace(path);
  if (fresh) it->second = walk(path, true, nullptr);
  return it->second;
}

std::vector<std::string> HostLookups::entries_on_the_way(const std::string& path) {
  std::vector<std::string> out;
  walk(path, false, &out);
  return out;
}

const struct stat* HostLookups::stat(const std::string& path) {
  auto real = realpath(path);
  return real ? lstat(*real) : nullptr;
}

const std::vector<MountEntry>& HostLookups::mounts() {
  if (given_) return *given_;
  if (!mounts_) mounts_ = read_mountinfo();
  return *mounts_;
}

const std::vector<MountBelow>& HostLookups::writable_mounts_below(const std::string& path) {
  auto it = below_.find(path);
  if (it == below_.end())
    it =
        below_
            .emplace(path, compiler::writable_mounts_below(realpath(path).value_or(path), mounts()))
            .first;
  return it->second;
}

}  // namespace zpolicy::compiler
