#include "compiler/resolve/link_free_stat.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "compiler/resolve/dir_fd.hpp"

namespace zpolicy::compiler {

using ir::HostKind;

bool stat_without_links(const std::string& p, struct stat& st) {
  const int fd = open_without_links(p, O_PATH | O_NOFOLLOW);
  if (fd < 0) return false;
  const int rc = fstat(fd, &st);
  const int saved = errno;
  close(fd);
  errno = saved;
  return rc == 0;
}

HostKind kind_of(const std::string& p) {
  struct stat st;
  return stat_without_links(p, st) ? kind_of(st.st_mode) : HostKind::Missing;
}

}  // namespace zpolicy::compiler
