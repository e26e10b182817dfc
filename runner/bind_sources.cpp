#include "runner/bind_sources.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

#include "runner/open_no_symlinks.hpp"

namespace zpolicy::runner {
namespace {

// The identity the verified policy gives each path it binds.
std::map<std::string, ir::HostIdentity> verified_identities(const ir::Resolved& r) {
  std::map<std::string, ir::HostIdentity> out;
  for (const auto* list : {&r.read, &r.write, &r.pin, &r.protect})
    for (const auto& p : *list)
      if (p.identity) out.emplace(p.path, *p.identity);
  return out;
}

// A run with many protected paths (nested repositories) holds one descriptor per bind
// until bwrap has mounted them: make room up to the hard limit rather than fail.
void make_room(size_t needed) {
  rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  const rlim_t want = static_cast<rlim_t>(needed) + 64;
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < want) {
    lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? want : std::min(want, lim.rlim_max);
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

}  // namespace

BindSources::~BindSources() {
  for (const auto& [fd, child] : fds_) close(fd);
}

bool BindSources::open(const std::vector<compiler::BindSource>& sources,
                       const ir::Resolved& verified, std::string& error) {
  const auto identities = verified_identities(verified);
  make_room(sources.size());
  for (const auto& s : sources) {
    int fd = open_no_symlinks(s.path, O_PATH);
    if (fd < 0) {
      error = "cannot open '" + s.path + "' without following a symlink: " + std::strerror(errno) +
              " (changed after verification?)";
      return false;
    }
    fds_.emplace_back(fd, s.fd);
    struct stat st;
    if (fstat(fd, &st) != 0) {
      error = "cannot stat '" + s.path + "': " + std::strerror(errno);
      return false;
    }
    if (s.path == "/dev/null") {
      if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
        error = "'/dev/null' is not the null device";
        return false;
      }
      continue;
    }
    auto want = identities.find(s.path);
    if (want == identities.end()) {
      error = "'" + s.path + "' has no identity in the verified policy";
      return false;
    }
    const ir::HostIdentity now{static_cast<std::uint64_t>(st.st_dev),
                               static_cast<std::uint64_t>(st.st_ino)};
    if (now != want->second) {
      error = "'" + s.path + "' is not the object that was verified (replaced since)";
      return false;
    }
  }
  return true;
}

}  // namespace zpolicy::runner
