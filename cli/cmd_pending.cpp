#include "cli/options.hpp"

namespace zpolicy::cli {
namespace {

int not_yet(const char* what, int issue) {
  std::cerr << "zpolicy: '" << what << "' is not implemented yet (issue #" << issue << ")\n";
  return kExitUsage;
}

}  // namespace

int cmd_verify(const Args&) { return not_yet("verify", 6); }
int cmd_check(const Args&) { return not_yet("check", 6); }
int cmd_explain(const Args&) { return not_yet("explain", 6); }

}  // namespace zpolicy::cli
