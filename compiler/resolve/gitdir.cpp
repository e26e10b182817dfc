#include "compiler/resolve/gitdir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zpolicy::compiler {

namespace {

// The first line of the regular file `path` (at most 4 KiB: git's own such files are one
// short line), trailing CR and spaces removed. lstat first: opening a device can act
// (rewind a tape, arm a watchdog) even with O_NONBLOCK. The open itself is still
// O_NONBLOCK|O_NOFOLLOW and checked with fstat, in case the name was swapped (by a
// concurrent sandbox, say) in between.
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

// `named` as written in a file of `dir`, made absolute against `dir`.
std::optional<std::string> absolute_against(std::string named, const std::string& dir) {
  if (named.empty() || named.find('\0') != std::string::npos) return std::nullopt;
  if (named[0] != '/') named = dir + "/" + named;
  return named;
}

}  // namespace

std::optional<std::string> gitdir_named_by(const std::string& pointer) {
  const auto line = first_line_of(pointer);
  static constexpr std::string_view kPrefix = "gitdir: ";
  if (!line || line->rfind(kPrefix, 0) != 0) return std::nullopt;
  return absolute_against(line->substr(kPrefix.size()), pointer.substr(0, pointer.rfind('/')));
}

CommonDir commondir_named_by(const std::string& gitdir) {
  // Git reads `commondir` only in a directory it takes for a git directory: one with a
  // HEAD (a file, or a symlink in old repositories).
  struct stat st;
  const std::string head = gitdir + "/HEAD", file = gitdir + "/commondir";
  if (lstat(head.c_str(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) return {};
  if (lstat(file.c_str(), &st) != 0) return {};
  if (S_ISLNK(st.st_mode)) return {std::nullopt, true};
  const auto line = first_line_of(file);
  if (!line) return {};
  return {absolute_against(*line, gitdir), false};
}

}  // namespace zpolicy::compiler
