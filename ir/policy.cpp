#include "ir/policy.hpp"

namespace zpolicy::ir {

const std::vector<std::string>& default_env_keep() {
  static const std::vector<std::string> keep = {"PATH", "HOME",  "USER", "LOGNAME", "LANG",
                                                "LC_*", "TERM", "TZ",   "SHELL"};
  return keep;
}

}  // namespace zpolicy::ir
