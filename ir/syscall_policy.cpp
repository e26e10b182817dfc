#include "ir/syscall_policy.hpp"

namespace zpolicy::ir {

std::string Action::str() const {
  switch (kind) {
    case Kind::Allow:
      return "allow";
    case Kind::Errno:
      return "errno(" + std::to_string(errno_value) + ")";
    case Kind::Kill:
      return "kill";
  }
  return "kill";
}

bool more_restrictive(const Action& a, const Action& b) {
  if (a.kind != b.kind) return static_cast<int>(a.kind) > static_cast<int>(b.kind);
  return a.kind == Action::Kind::Errno && a.errno_value < b.errno_value;
}

const char* to_string(CmpOp op) {
  switch (op) {
    case CmpOp::Eq:
      return "==";
    case CmpOp::Ne:
      return "!=";
    case CmpOp::Lt:
      return "<";
    case CmpOp::Le:
      return "<=";
    case CmpOp::Gt:
      return ">";
    case CmpOp::Ge:
      return ">=";
    case CmpOp::MaskedEq:
      return "&==";
  }
  return "==";
}

}  // namespace zpolicy::ir
