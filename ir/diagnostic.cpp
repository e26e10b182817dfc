#include "ir/diagnostic.hpp"

namespace zpolicy::ir {

std::string SourceLoc::str() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

const char* to_string(Severity s) {
  switch (s) {
    case Severity::Note:
      return "note";
    case Severity::Warning:
      return "warning";
    case Severity::Error:
      return "error";
  }
  return "error";
}

std::string Diagnostic::str() const {
  return loc.str() + ": " + to_string(severity) + ": " + message;
}

void Diagnostics::error(SourceLoc loc, std::string message) {
  items_.push_back({Severity::Error, std::move(loc), std::move(message)});
}

void Diagnostics::warning(SourceLoc loc, std::string message) {
  items_.push_back({Severity::Warning, std::move(loc), std::move(message)});
}

bool Diagnostics::has_errors() const {
  for (const auto& d : items_)
    if (d.severity == Severity::Error) return true;
  return false;
}

std::string Diagnostics::str() const {
  std::string out;
  for (const auto& d : items_) out += d.str() + "\n";
  return out;
}

}  // namespace zpolicy::ir
