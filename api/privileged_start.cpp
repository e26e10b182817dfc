// `privileged_start`: the runner's identity check, for the command line as for embedders.
#include "runner/backend.hpp"
#include "zpolicy/zpolicy.hpp"

namespace zpolicy {

std::string privileged_start() { return runner::set_id_process(); }

}  // namespace zpolicy
