#include "compiler/resolve/gitdir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zpolicy::compiler {

std::optional<std::string> gitdir_named_by(const std::string& pointer) {
  // lstat first: opening a device can act (rewind a tape, arm a watchdog) even with
  // O_NONBLOCK. The open itself is still O_NONBLOCK|O_NOFOLLOW and checked with fstat,
  // in case the name was swapped (by a concurrent sandbox, say) in between.
  struct stat st;
  if (lstat(pointer.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  int fd = open(pointer.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buf[4096];  // git's own pointer files are one short line
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) text.assign(buf, static_cast<size_t>(n));
  }
  close(fd);
  static constexpr std::string_view kPrefix = "gitdir: ";
  if (text.rfind(kPrefix, 0) != 0) return std::nullopt;
  std::string target = text.substr(kPrefix.size(), text.find('\n') - kPrefix.size());
  while (!target.empty() && (target.back() == '\r' || target.back() == ' ')) target.pop_back();
  if (target.empty() || target.find('\0') != std::string::npos) return std::nullopt;
  if (target[0] != '/') target = pointer.substr(0, pointer.rfind('/')) + "/" + target;
  return target;
}

}  // namespace zpolicy::compiler
