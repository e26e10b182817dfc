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

namespace {

// The file `path` read as git reads a file naming one path (NamedPath), its trailing '\n'
// and '\r' removed; none where git takes nothing from it. `refusal` as NamedPath's.
struct PathFile {
  std::optional<std::string> text;
  std::optional<std::string> refusal;
};

PathFile unreadable(const std::string& path, int error) {
  // Another user's file, or one behind another user's directory, git run by the caller
  // cannot read either: it dies there or takes the file for none.
  if (error == ENOENT || error == ENOTDIR || (error == EACCES && denied_for_good(path, R_OK)))
    return {};
  return {std::nullopt, "zpolicy cannot read '" + path + "' (" + std::strerror(error) + ")" +
                            (error == EACCES ? ", the caller's own, which the caller or the "
                                               "sandbox may make readable again"
                                             : "")};
}

// lstat first, as first_line_of (a device is never opened); then O_NOFOLLOW and fstat.
PathFile read_path_file(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return unreadable(path, errno);
  if (!S_ISREG(st.st_mode)) return {};
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return unreadable(path, errno);
  PathFile out{std::string(), std::nullopt};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    out = unreadable(path, EIO);
  } else {
    char buf[65536];
    for (;;) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) out = unreadable(path, errno);
      if (n <= 0) break;
      out.text->append(buf, static_cast<size_t>(n));
      if (out.text->size() > kGitPathFileMaxBytes) {
        out = {std::nullopt, "'" + path + "' is larger than " +
                                 std::to_string(kGitPathFileMaxBytes) + " bytes, more than git " +
                                 "reads of a file naming a path"};
        break;
      }
    }
  }
  close(fd);
  if (!out.text) return out;
  if (out.text->find('\0') != std::string::npos)
    return {std::nullopt,
            "'" + path + "' holds a NUL byte, where git's name ends; no file " + "git writes does"};
  while (!out.text->empty() && (out.text->back() == '\n' || out.text->back() == '\r'))
    out.text->pop_back();
  return out;
}

// `named` as written in a file of `dir`, made absolute against `dir`.
std::optional<std::string> absolute_against(std::string named, const std::string& dir) {
  if (named.empty()) return std::nullopt;
  if (named[0] != '/') named = (dir == "/" ? "" : dir) + "/" + named;
  return named;
}

}  // namespace

NamedPath gitdir_named_by(const std::string& pointer) {
  return gitdir_named_by(pointer, pointer.substr(0, std::max<size_t>(pointer.rfind('/'), 1)));
}

NamedPath gitdir_named_by(const std::string& file, const std::string& dir) {
  const PathFile read = read_path_file(file);
  static constexpr std::string_view kPrefix = "gitdir: ";
  if (!read.text) return {std::nullopt, read.refusal};
  if (read.text->rfind(kPrefix, 0) != 0) return {};
  return {absolute_against(read.text->substr(kPrefix.size()), dir), std::nullopt};
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
  const PathFile read = read_path_file(file);
  if (!read.text) return {std::nullopt, false, read.refusal};
  return {absolute_against(*read.text, gitdir), false, std::nullopt};
}

NamedPath worktree_of_admin_dir(const std::string& admin) {
  PathFile read = read_path_file(admin + "/gitdir");
  if (!read.text) return {std::nullopt, read.refusal};
  // worktree.c strips every trailing space of this one (strbuf_rtrim).
  while (!read.text->empty() && std::isspace(static_cast<unsigned char>(read.text->back())))
    read.text->pop_back();
  const auto pointer = absolute_against(*read.text, admin);
  if (!pointer) return {};
  return {pointer->substr(0, std::max<size_t>(pointer->rfind('/'), 1)), std::nullopt};
}

bool denied_for_good(const std::string& path, int mode) {
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string at = path.substr(0, end);
    const bool last = end == std::string::npos;
    if (faccessat(AT_FDCWD, at.c_str(), last ? mode : X_OK, AT_EACCESS) != 0) {
      struct stat st;
      return errno == EACCES && stat(at.c_str(), &st) == 0 && st.st_uid != geteuid();
    }
    if (last) return false;
  }
}

namespace {

// Whether the caller lacks search permission on `dir` (or on a directory on the way to it),
// as git run by the caller would, and cannot give it to itself: EACCES there is nothing git
// can reach. The first directory on the way the caller may not search is judged: one of the
// caller's own (a hooks directory at mode 0) is one the caller may open again with chmod,
// and git then runs what it holds (red team A14B-5), so it counts as searchable.
bool not_searchable(const std::string& dir) { return denied_for_good(dir, X_OK); }

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

GitConfigFile::Status opened_config_status(const struct stat& named, const struct stat& opened) {
  const bool same = named.st_dev == opened.st_dev && named.st_ino == opened.st_ino;
  return same && S_ISREG(opened.st_mode) ? GitConfigFile::Status::Read
                                         : GitConfigFile::Status::Unreadable;
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
  struct stat opened;
  GitConfigFile out{fstat(fd, &opened) == 0 ? opened_config_status(st, opened) : Status::Unreadable,
                    {}};
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
