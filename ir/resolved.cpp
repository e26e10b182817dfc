#include "ir/resolved.hpp"

namespace zpolicy::ir {

const char* to_string(HostKind k) {
  switch (k) {
    case HostKind::Unknown:
      return "unknown";
    case HostKind::Directory:
      return "directory";
    case HostKind::File:
      return "file";
    case HostKind::Missing:
      return "missing";
  }
  return "unknown";
}

}  // namespace zpolicy::ir
