#include "cli/options.hpp"
namespace zpolicy::cli {
int cmd_run(const Args&) { std::cerr << "zpolicy: run: not implemented yet (issue #3)\n"; return kExitInternal; }
int cmd_doctor(const Args&) { std::cerr << "zpolicy: doctor: not implemented yet (issue #3)\n"; return kExitUsage; }
}
