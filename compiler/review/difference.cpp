#include "compiler/review/difference.hpp"

namespace zpolicy::compiler::review {

const char* to_string(Area a) {
  switch (a) {
    case Area::Mode:
      return "mode";
    case Area::Filesystem:
      return "filesystem";
    case Area::Network:
      return "network";
    case Area::Syscalls:
      return "syscalls";
    case Area::Environment:
      return "environment";
    case Area::Timeout:
      return "timeout";
    case Area::Unavailable:
      return "unavailable";
  }
  return "?";
}

const char* to_string(Direction d) {
  return d == Direction::Widening ? "widening" : "narrowing";
}

}  // namespace zpolicy::compiler::review
