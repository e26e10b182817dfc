#pragma once

#include <string>
#include <vector>

#include "ir/source_location.hpp"
#include "ir/target.hpp"

namespace zpolicy::compiler::review {

// What a review compares (docs/review.md): each is one column of the semantic table.
enum class Area { Mode, Filesystem, Network, Syscalls, Environment, Timeout, Unavailable };
const char* to_string(Area a);

// Widening: NEW allows something OLD refused. Narrowing: the reverse. A change that is
// neither a subset nor a superset (a different value for a `set` variable) counts as a
// widening, so that a gate on widenings never lets it through unseen.
enum class Direction { Widening, Narrowing };
const char* to_string(Direction d);

// One policy's answer for the subject of a difference, and the line that gives it.
struct Side {
  std::string verdict;  // "allowed", "denied", "errno(1)", "loopback", "120s", "not kept"
  std::string reason;   // the rule in words: "under protected path ${WORKSPACE}/.git"
  ir::SourceLoc loc;    // empty file: no line of the policy says anything about it
  friend bool operator==(const Side&, const Side&) = default;
};

// One semantic difference between two policies.
struct Difference {
  std::vector<ir::Target> targets;  // where it holds; differences equal on both are merged
  Area area = Area::Filesystem;
  // The path ("${HOME}/.cache and 5 paths probed below it" for several), the call
  // ("socket(AF_INET)"), the environment entry ("keep AWS_*"), or the setting.
  std::string subject;
  std::string path_class;           // Filesystem: why the path was compared
  std::vector<std::string> operations;  // Filesystem: read, write, create, delete
  // Filesystem: every probed path that changes so; Syscalls: every call of a row that
  // stands for several.
  std::vector<std::string> paths;
  Direction direction = Direction::Widening;
  Side before, after;
  friend bool operator==(const Difference&, const Difference&) = default;
};

}  // namespace zpolicy::compiler::review
