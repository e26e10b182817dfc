#include "runner/status_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "compiler/resolve/openat2.hpp"
#include "compiler/run_plan.hpp"
#include "runner/status_file_location.hpp"
#include "zpolicy/exit_code.hpp"

namespace zpolicy::runner {

namespace {

constexpr int kFlags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

// Without a plan (a run refused before it was planned) there are no writable roots to
// tell a symlink the caller made from one an earlier sandbox planted in its workspace, so
// none is followed: through one, the refusal's document would create or replace a file of
// that name in any directory the caller can write (red team R8-S2, R7-S2's gap).
int open_without_symlinks(const std::string& path) {
  using compiler::Resolve;
  return compiler::openat2(AT_FDCWD, path.c_str(), kFlags,
                           Resolve::NoSymlinks | Resolve::NoMagicLinks, 0644);
}

}  // namespace

void StatusFile::empty_earlier(const std::string& path) {
  using compiler::Resolve;
  const int fd = compiler::openat2(AT_FDCWD, path.c_str(), kFlags & ~O_CREAT,
                                   Resolve::NoSymlinks | Resolve::NoMagicLinks, 0);
  if (fd < 0) return;
  struct stat st {};
  // One name only: before the plan nothing tells whether FILE lies where an earlier sandbox
  // could have linked it to a file of the caller's (`.bashrc`), which open() then refuses.
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1;
  // Emptied or not, open() empties it again or refuses the run.
  [[maybe_unused]] const int emptied = regular ? ftruncate(fd, 0) : 0;
  close(fd);
}

std::variant<StatusFile, int> StatusFile::open(const std::string& path,
                                               const compiler::RunPlan* plan, std::ostream& err) {
  if (plan)
    if (const auto root = writable_root_holding(*plan, path); !root.empty()) {
      err << "zpolicy: run: --status-file '" << path << "' lies in writable root '" << root
          << "': the command could replace it with a status of its own; write it outside "
             "every writable root; nothing ran\n";
      return kExitUsage;
    }
  int fd = plan ? ::open(path.c_str(), kFlags, 0644) : open_without_symlinks(path);
  if (fd < 0 && !plan && errno == ELOOP) {
    err << "zpolicy: run: --status-file '" << path
        << "' is named through a symlink, and the run was refused before it was planned: "
           "without its writable roots, a symlink a sandbox planted cannot be told from "
           "yours; name it without symlinks; nothing ran\n";
    return kExitUsage;
  }
  // Above 0-2: an embedder may have closed one, and a status file on stdin or stdout would
  // be handed to the command as its standard stream (red team R8-S3).
  if (fd >= 0 && fd <= 2) {
    const int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    fd = high;
  }
  struct stat st {};
  // One name only (opened without O_TRUNC, so nothing is changed yet): an earlier sandbox
  // that wrote where FILE is named (its workspace, not this run's writable roots) could link
  // the name to a file of the caller's, and the status document replaced `~/.bashrc`; so did
  // a refusal's, before any plan (red team, session 29).
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1) {
    err << "zpolicy: run: --status-file '" << path << "' has " << st.st_nlink
        << " names (hard links): writing it would change the file behind the others too, which "
           "an earlier sandbox may have linked to a file of yours; name a file of one name; "
           "nothing ran\n";
    close(fd);
    return kExitUsage;
  }
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 || ftruncate(fd, 0) != 0) {
    const int e = errno;
    err << "zpolicy: run: cannot write --status-file '" << path << "': "
        << (fd >= 0 && !S_ISREG(st.st_mode) ? "not a regular file" : std::strerror(e))
        << "; nothing ran\n";
    if (fd >= 0) close(fd);
    return kExitUsage;
  }
  return StatusFile(path, fd);
}

StatusFile::StatusFile(StatusFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

StatusFile::~StatusFile() {
  if (fd_ >= 0) close(fd_);
}

void StatusFile::write(std::string_view document, std::ostream& err) {
  if (fd_ < 0) return;
  size_t done = ftruncate(fd_, 0) == 0 && lseek(fd_, 0, SEEK_SET) == 0 ? 0 : document.size() + 1;
  while (done < document.size()) {
    const ssize_t w = ::write(fd_, document.data() + done, document.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  const int e = errno;
  const bool written = done == document.size();
  const bool closed = close(fd_) == 0;
  fd_ = -1;
  if (!written || !closed)
    err << "zpolicy: run: cannot write --status-file '" << path_
        << "': " << std::strerror(written ? errno : e) << "\n";
}

}  // namespace zpolicy::runner
