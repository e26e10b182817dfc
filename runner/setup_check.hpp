#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/analyzer/bwrap/expected_setup.hpp"
#include "compiler/resolve/mount_names.hpp"

namespace zpolicy::runner {

// The host-side check of a sandbox's mount namespace, made while bwrap waits on
// --block-fd with every setup operation done and the command not yet started
// (docs/run.md "Checking the sandbox before the command starts").
class SetupCheck {
 public:
  // `expected`: the verified argv's expected_setup(). `sources`: (descriptor here,
  // descriptor number in bwrap) of every bind by descriptor. `absent`: the deny roots that
  // did not exist when the run was checked and that nothing masks (missing_deny_names):
  // they must not exist in the sandbox either. The host's watches see a name created,
  // never a filesystem mounted; one the host mounted after that check and before the
  // guard's private mount namespace was made is in the sandbox (red team A9D-1), one
  // mounted later never is (A17B-4).
  SetupCheck(std::vector<compiler::ExpectedObject> expected,
             std::vector<std::pair<int, int>> sources, int block_fd,
             std::vector<std::string> absent);

  enum class Result {
    Holds,       // every expected object is where it must be: the command may start
    Differs,     // something else is there: the command must never start
    SetupEnded,  // bwrap ended before it blocked: nothing to check, nothing will run
    TimedOut,    // bwrap did not block within kSetupDeadline: the command must never start
  };
  // Waits until the sandbox's init `init` blocks on the block descriptor, then walks
  // each destination below its root without following any symlink, and looks each
  // absent deny root up as the sandbox would (symlinks followed within its root). On
  // Differs, `why` names the first destination that is not what the argv put there, or
  // the deny root found.
  Result check(pid_t init, std::string& why) const;

  // The sandbox's own mount table, as the sandbox names it, read after check() said Holds:
  // the init still blocks on the block descriptor when it has been read, so every mount
  // is made and nothing mounts in that namespace before the release (red team A14-1). The
  // init is pinned by a descriptor of its /proc directory: its number taken by another
  // process reads nothing. Empty when it cannot be read or the init no longer blocks.
  std::optional<std::vector<compiler::MountEntry>> mounts(pid_t init) const;

 private:
  std::vector<compiler::ExpectedObject> expected_;
  std::vector<std::pair<int, int>> sources_;
  int block_fd_;
  std::vector<std::string> absent_;
};

}  // namespace zpolicy::runner
