#include "compiler/resolve/state_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace zpolicy::compiler {

std::string zpolicy_state_dir() {
  if (getuid() == 0) return "/run/zpolicy";
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg && xdg[0] == '/') {
    struct stat st;
    if (stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid())
      return std::string(xdg) + "/zpolicy";
  }
  return "/tmp/zpolicy-" + std::to_string(getuid());
}

}  // namespace zpolicy::compiler
