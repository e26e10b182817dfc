#include "compiler/resolve/gitdir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace zpolicy::compiler {

namespace {

// `named` as written in a file of `dir`, made absolute against `dir`.
std::optional<std::string> absolute_against(std::string named, const std::string& dir) {
  if (named.empty() || named.find('\0') != std::string::npos) return std::nullopt;
  if (named[0] != '/') named = dir + "/" + named;
  return named;
}

}  // namespace

// lstat first: opening a device can act (rewind a tape, arm a watchdog) even with
// O_NONBLOCK. The open itself is still O_NONBLOCK|O_NOFOLLOW and checked with fstat, in
// case the name was swapped (by a concurrent sandbox, say) in between.
std::optional<std::string> first_line_of(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) text.assign(buf, static_cast<size_t>(n));
  }
  close(fd);
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

std::optional<std::string> gitdir_named_by(const std::string& pointer) {
  return gitdir_named_by(pointer, pointer.substr(0, pointer.rfind('/')));
}

std::optional<std::string> gitdir_named_by(const std::string& file, const std::string& dir) {
  const auto line = first_line_of(file);
  static constexpr std::string_view kPrefix = "gitdir: ";
  if (!line || line->rfind(kPrefix, 0) != 0) return std::nullopt;
  return absolute_against(line->substr(kPrefix.size()), dir);
}

bool has_git_head(const std::string& dir) {
  struct stat st;
  const std::string head = dir + "/HEAD";
  return lstat(head.c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode));
}

GitHead git_head_at(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return GitHead::None;
  if (S_ISLNK(st.st_mode)) {
    char buf[256];
    const ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
    return n >= 5 && std::string_view(buf, 5) == "refs/" ? GitHead::Taken : GitHead::None;
  }
  if (!S_ISREG(st.st_mode)) return GitHead::Could;
  // As git reads it: at most 255 bytes, whitespace after `ref:` newlines included.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return errno == EACCES ? GitHead::None : GitHead::Could;
  char buf[255];
  ssize_t n;
  do n = read(fd, buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  close(fd);
  if (n < 0) return GitHead::Could;
  std::string_view text(buf, static_cast<size_t>(n));
  if (text.rfind("ref:", 0) == 0) {
    std::string_view ref = text.substr(4);
    while (!ref.empty() && std::isspace(static_cast<unsigned char>(ref.front())))
      ref.remove_prefix(1);
    if (ref.rfind("refs/", 0) == 0) return GitHead::Taken;
  }
  // An object name: 40 hex digits (SHA-1, git's default before it reads the repository's
  // format), or more.
  size_t hex = 0;
  while (hex < text.size() && std::isxdigit(static_cast<unsigned char>(text[hex]))) ++hex;
  return hex >= 40 ? GitHead::Taken : GitHead::None;
}

bool has_objects_and_refs(const std::string& dir) {
  // As git tests them, with access(2): through a symlink, and a searchable file passes too.
  auto searchable = [](const std::string& p) { return access(p.c_str(), X_OK) == 0; };
  return searchable(dir + "/objects") && searchable(dir + "/refs");
}

bool is_git_directory(const std::string& dir) {
  struct stat st;
  const bool linked = lstat((dir + "/commondir").c_str(), &st) == 0;  // a linked worktree's
  return has_git_head(dir) && (linked || has_objects_and_refs(dir));
}

std::vector<std::string> enter_repo_candidates(const std::string& path) {
  std::string base = path;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return {base + "/.git", base, base + ".git/.git", base + ".git"};
}

CommonDir commondir_named_by(const std::string& gitdir) {
  // Git reads `commondir` only in a directory it takes for a git directory.
  struct stat st;
  const std::string file = gitdir + "/commondir";
  if (!has_git_head(gitdir)) return {};
  if (lstat(file.c_str(), &st) != 0) return {};
  if (S_ISLNK(st.st_mode)) return {std::nullopt, true};
  const auto line = first_line_of(file);
  if (!line) return {};
  return {absolute_against(*line, gitdir), false};
}

std::optional<std::string> worktree_of_admin_dir(const std::string& admin) {
  const auto line = first_line_of(admin + "/gitdir");
  if (!line) return std::nullopt;
  const auto pointer = absolute_against(*line, admin);
  if (!pointer) return std::nullopt;
  return pointer->substr(0, std::max<size_t>(pointer->rfind('/'), 1));
}

namespace {

// Whether the caller lacks search permission on `dir` (or on a directory on the way to it),
// as git run by the caller would, and cannot give it to itself: EACCES there is nothing git
// can reach. The first directory on the way the caller may not search is judged: one of the
// caller's own (a hooks directory at mode 0) is one the caller may open again with chmod,
// and git then runs what it holds (red team A14B-5), so it counts as searchable.
bool not_searchable(const std::string& dir) {
  if (faccessat(AT_FDCWD, dir.c_str(), X_OK, AT_EACCESS) == 0 || errno != EACCES) return false;
  for (size_t end = dir.find('/', 1);; end = dir.find('/', end + 1)) {
    const std::string at = dir.substr(0, end);
    if (faccessat(AT_FDCWD, at.c_str(), X_OK, AT_EACCESS) != 0) {
      struct stat st;
      return errno == EACCES && stat(at.c_str(), &st) == 0 && st.st_uid != geteuid();
    }
    if (end == std::string::npos) return false;
  }
}

}  // namespace

GitLevel list_git_level(const std::string& dir) {
  GitLevel out;
  DIR* d = opendir(dir.c_str());
  if (!d) {
    const int error = errno;
    if (error != ENOENT && error != ENOTDIR && !(error == EACCES && not_searchable(dir)))
      out.error = error;
    return out;
  }
  for (;;) {
    errno = 0;
    const dirent* e = readdir(d);
    if (!e) {
      out.error = errno;
      break;
    }
    if (std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..")
      out.names.emplace_back(e->d_name);
  }
  closedir(d);
  std::sort(out.names.begin(), out.names.end());
  return out;
}

bool entry_unreachable(const std::string& dir, int error) {
  return error == ENOENT || (error == EACCES && not_searchable(dir));
}

std::string unlistable_git_level(const std::string& dir, const std::string& what, int error) {
  return "git reaches " + what + " '" + dir + "' by name, and zpolicy cannot list it (" +
         std::strerror(error) + ") to read them; make it readable by the user running zpolicy";
}

AdminDirs linked_worktree_admin_dirs(const std::string& common) {
  const std::string dir = common + "/worktrees";
  GitLevel level = list_git_level(dir);
  AdminDirs out{{}, level.error, level.error ? dir : std::string()};
  for (const auto& name : level.names) {
    const std::string path = dir + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)) out.dirs.push_back(path);
      continue;
    }
    const int error = errno;
    if (entry_unreachable(dir, error)) continue;
    if (!out.error) {
      out.error = error;
      out.unreadable = path;
    }
  }
  return out;
}

DirLinks symlinks_in(const std::string& dir) {
  DirLinks out;
  const GitLevel level = list_git_level(dir);
  if (level.error) out.unreadable = dir;
  for (const auto& name : level.names) {
    const std::string path = dir + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) {
      if (!entry_unreachable(dir, errno) && !out.unreadable) out.unreadable = path;
      continue;
    }
    if (!S_ISLNK(st.st_mode)) continue;
    char buf[4096];
    const ssize_t n = readlink(path.c_str(), buf, sizeof buf);
    if (n > 0 && static_cast<size_t>(n) < sizeof buf)
      out.links.push_back({path, std::string(buf, static_cast<size_t>(n))});
    else if (!(n < 0 && errno == ENOENT) && !out.unreadable)
      out.unreadable = path;
  }
  std::sort(out.links.begin(), out.links.end(),
            [](const DirLink& a, const DirLink& b) { return a.path < b.path; });
  return out;
}

GitConfigFile read_git_config_file(const std::string& path) {
  using Status = GitConfigFile::Status;
  struct stat st;
  if (lstat(path.c_str(), &st) != 0)
    return {errno == ENOENT || errno == ENOTDIR ? Status::Missing
            : errno == EACCES                   ? Status::Denied
                                                : Status::Unreadable,
            {}};
  if (S_ISDIR(st.st_mode)) return {Status::Directory, {}};
  if (!S_ISREG(st.st_mode)) return {Status::Other, {}};
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return {errno == EACCES ? Status::Denied : Status::Unreadable, {}};
  GitConfigFile out{Status::Read, {}};
  if (fstat(fd, &st) != 0)
    out.status = Status::Unreadable;
  else if (!S_ISREG(st.st_mode))
    out.status = S_ISDIR(st.st_mode) ? Status::Directory : Status::Other;
  char buf[65536];
  while (out.status == Status::Read) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) out.status = Status::Unreadable;
    if (n <= 0) break;
    out.text.append(buf, static_cast<size_t>(n));
    if (out.text.size() > kGitConfigMaxBytes) out.status = Status::TooLarge;
  }
  close(fd);
  if (out.status != Status::Read) out.text.clear();
  return out;
}

}  // namespace zpolicy::compiler
