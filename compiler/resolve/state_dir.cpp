#include "compiler/resolve/state_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>

namespace zpolicy::compiler {
namespace {

bool private_to_caller(const struct stat& st) {
  return S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 077) == 0;
}

// 64 random bits in hex: a name no other user (nor a sandbox) can make first but by chance.
std::string random_suffix() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", static_cast<unsigned>(rd()),
                static_cast<unsigned>(rd()));
  return buf;
}

struct Choice {
  std::string dir, note;
  bool own = false;
};

std::string usual() {
  return getuid() == 0 ? "/run/zpolicy" : "/tmp/zpolicy-" + std::to_string(getuid());
}

Choice choose() {
  if (getuid() == 0) return {usual(), "", false};
  const std::string fixed = usual();
  struct stat st;
  if (lstat(fixed.c_str(), &st) != 0) {
    // Absent: the run creates it. Not examinable: the run refuses on it (fail closed).
    const bool absent = errno == ENOENT;
    return {fixed, absent ? "" : fixed + " cannot be examined", false};
  }
  if (private_to_caller(st)) return {fixed, "", false};
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  const std::string own = fixed + "-" + random_suffix();
  return {own,
          fixed + " is not a private directory of this user's (owner uid " +
              std::to_string(st.st_uid) + ", mode " + mode +
              "); each run keeps its state in a directory of its own, so a run killed (or "
              "ending while another is live) leaves its placeholders for you to remove",
          true};
}

const Choice& chosen() {
  static const Choice c = choose();
  return c;
}

}  // namespace

std::string zpolicy_state_dir() { return chosen().dir; }

std::string zpolicy_usual_state_dir() { return usual(); }

bool zpolicy_state_dir_is_private_to_this_process() { return chosen().own; }

std::string zpolicy_state_dir_note() { return chosen().note; }

}  // namespace zpolicy::compiler
