#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/analyzer/bwrap/expected_setup.hpp"

namespace zpolicy::runner {

// The host-side check of a sandbox's mount namespace, made while bwrap waits on
// --block-fd with every setup operation done and the command not yet started
// (docs/run.md "Checking the sandbox before the command starts").
class SetupCheck {
 public:
  // `expected`: the verified argv's expected_setup(). `sources`: (descriptor here,
  // descriptor number in bwrap) of every bind by descriptor.
  SetupCheck(std::vector<compiler::ExpectedObject> expected,
             std::vector<std::pair<int, int>> sources, int block_fd);

  enum class Result {
    Holds,       // every expected object is where it must be: the command may start
    Differs,     // something else is there: the command must never start
    SetupEnded,  // bwrap ended before it blocked: nothing to check, nothing will run
  };
  // Waits until the sandbox's init `init` blocks on the block descriptor, then walks
  // each destination below its root without following any symlink. On Differs, `why`
  // names the first destination that is not what the argv put there.
  Result check(pid_t init, std::string& why) const;

 private:
  std::vector<compiler::ExpectedObject> expected_;
  std::vector<std::pair<int, int>> sources_;
  int block_fd_;
};

}  // namespace zpolicy::runner
