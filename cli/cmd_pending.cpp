#include "cli/options.hpp"

namespace zpolicy::cli {
namespace {

// A subcommand whose issue has not landed: --help still describes it (exit 0); anything
// else says so and exits 2, so no script mistakes it for a check that passed.
int not_yet(const Args& args, const char* what, const char* usage, int issue) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h") {
      std::cout << "usage: " << usage << "\n\n(not implemented yet: issue #" << issue << ")\n";
      return kExitOk;
    }
  std::cerr << "zpolicy: '" << what << "' is not implemented yet (issue #" << issue << ")\n";
  return kExitUsage;
}

}  // namespace

int cmd_verify(const Args& a) {
  return not_yet(a, "verify", "zpolicy verify POLICY DIR --target linux|macos [--workspace DIR]",
                 6);
}
int cmd_check(const Args& a) { return not_yet(a, "check", "zpolicy check POLICY", 6); }
int cmd_explain(const Args& a) {
  return not_yet(a, "explain", "zpolicy explain POLICY PATH [--op read|write] [--target T]", 6);
}

}  // namespace zpolicy::cli
