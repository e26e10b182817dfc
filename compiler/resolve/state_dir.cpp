#include "compiler/resolve/state_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

namespace zpolicy::compiler {
namespace {

constexpr const char* kShared = "/tmp";

bool private_to_caller(const struct stat& st) {
  return S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 077) == 0;
}

// Absent (a run creates it) or the caller's private directory; a symlink never is.
bool usable(const std::string& dir) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return errno == ENOENT;
  return private_to_caller(st);
}

// The caller's private directories named PREFIX-XXXXXX in /tmp, sorted by name. Another
// user can make any number of such names, but none of them is the caller's.
std::vector<std::string> own_random_dirs(const std::string& prefix) {
  std::vector<std::string> found;
  DIR* d = opendir(kShared);
  if (!d) return found;
  const std::string name_prefix = prefix.substr(std::string(kShared).size() + 1) + "-";
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    struct stat st;
    if (name.size() == name_prefix.size() + 6 && name.starts_with(name_prefix) &&
        fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && private_to_caller(st))
      found.push_back(std::string(kShared) + "/" + name);
  }
  closedir(d);
  std::sort(found.begin(), found.end());
  return found;
}

// The caller's directory of an unpredictable name: the first existing one, or a new one.
// Two first runs may each make one at once: a run keeps the one it made only when it is
// the only one, otherwise it removes its own (still empty) and looks again, so that both
// settle on one directory.
std::optional<std::string> random_dir(const std::string& prefix) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (auto own = own_random_dirs(prefix); !own.empty()) return own.front();
    std::string tmpl = prefix + "-XXXXXX";
    if (!mkdtemp(tmpl.data())) return std::nullopt;
    const auto own = own_random_dirs(prefix);
    if (own.size() == 1 && own.front() == tmpl) return tmpl;
    rmdir(tmpl.c_str());
    usleep(static_cast<useconds_t>(1000 + (getpid() % 7) * 1000 * attempt));
  }
  return std::nullopt;
}

struct Choice {
  std::string dir, note;
};

Choice choose() {
  if (getuid() == 0) return {"/run/zpolicy", ""};
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg && xdg[0] == '/') {
    struct stat st;
    if (stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
        (st.st_mode & 022) == 0 && usable(std::string(xdg) + "/zpolicy"))
      return {std::string(xdg) + "/zpolicy", ""};
  }
  const std::string fixed = std::string(kShared) + "/zpolicy-" + std::to_string(getuid());
  struct stat st;
  if (lstat(fixed.c_str(), &st) != 0) {
    // A directory of an unpredictable name made while the usual name was taken stays in
    // use once the name is free again, so that its run records are still reconciled.
    const auto own = own_random_dirs(fixed);
    return {own.empty() ? fixed : own.front(), ""};
  }
  if (private_to_caller(st)) return {fixed, ""};
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  const std::string note = fixed + " is not a private directory of this user's (owner uid " +
                           std::to_string(st.st_uid) + ", mode " + mode + ")";
  if (auto dir = random_dir(fixed)) return {*dir, note + "; runs keep their state in " + *dir};
  // Fail closed: the run refuses on a state directory that is not its own.
  return {fixed, note};
}

const Choice& chosen() {
  static const Choice c = choose();
  return c;
}

}  // namespace

std::string zpolicy_state_dir() { return chosen().dir; }

std::string zpolicy_state_dir_note() { return chosen().note; }

}  // namespace zpolicy::compiler
