#pragma once

#include <string>
#include <vector>

#include "compiler/resolve/mount_names.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::runner {

// zpolicy's state directory is hidden from the sandbox by a mask at its own path (the deny
// root `<zpolicy state>`). A bind mount on the host gives the same directory other names
// (`mount --bind /tmp /srv/scratch` makes `/srv/scratch/zpolicy-UID` the state directory
// too), and a writable root holding such a name shows it unmasked: the sandbox could write
// run records there, and reconciliation would act on them (red team A10B-2); a read root
// holding one unmasked lets it flock the lock every other run waits for (red team A11B-3;
// resolution masks the other names of a state directory that existed then). Returns that
// other name and the root of `resolved` holding it, as "NAME (in writable root ROOT)" or
// "NAME (in read root ROOT)", or empty when there is none. `dir` must exist; `mounts` is
// the host's mount table (empty: it could not be read, refused).
std::string state_dir_exposed(const ir::Resolved& resolved, const std::string& dir,
                              const std::vector<compiler::MountEntry>& mounts);

// When another user holds the usual state directory name (/tmp/zpolicy-UID), each run keeps
// its state in a directory of its own (compiler/resolve/state_dir.hpp), and nothing masks
// the usual name: freed while the run lives (its owner removes it, a /tmp cleaner), a
// sandbox that may write its parent makes it, with a forged run record the caller's next
// run or `cleanup` acts on (red team A11-5). Returns where the sandbox could make it, as
// "PARENT (writable root ROOT)" or "NAME, the host's other name of PARENT (in writable root
// ROOT)", or empty when no writable root of `resolved` holds the usual name's parent under
// any name. `usual` is that name (absolute); `mounts` as above.
std::string usual_state_dir_makeable(const ir::Resolved& resolved, const std::string& usual,
                                     const std::vector<compiler::MountEntry>& mounts);

}  // namespace zpolicy::runner
