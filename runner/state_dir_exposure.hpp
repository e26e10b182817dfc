#pragma once

#include <string>

#include "ir/resolved.hpp"

namespace zpolicy::runner {

// zpolicy's state directory is hidden from the sandbox by a mask at its own path (the deny
// root `<zpolicy state>`). A bind mount on the host gives the same directory other names
// (`mount --bind /tmp /srv/scratch` makes `/srv/scratch/zpolicy-UID` the state directory
// too), and a writable root holding such a name shows it unmasked: the sandbox could write
// run records there, and reconciliation would act on them (red team A10B-2). Returns that
// other name and the writable root of `resolved` holding it, as "NAME (in writable root
// ROOT)", or empty when there is none. `dir` must exist; looks at the host's mount table.
std::string state_dir_exposed(const ir::Resolved& resolved, const std::string& dir);

}  // namespace zpolicy::runner
