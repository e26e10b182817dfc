#include "compiler/analyzer/finding.hpp"

namespace zpolicy::compiler {

std::string Finding::str() const {
  std::string out = rule.str() + ": error: " + target + ": " + kind + ": " + probe + ": expected " +
                    expected + ", artifact gives " + actual + "\n";
  for (const auto& t : trace) out += "    " + t + "\n";
  return out;
}

}  // namespace zpolicy::compiler
