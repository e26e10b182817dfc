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

namespace {

// A diagnostic is one line whatever the policy text it quotes: a newline or a control
// byte from a scalar would otherwise split it or forge a second, differently located one.
std::string one_line(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

std::string Diagnostic::str() const {
  return one_line(loc.str()) + ": " + to_string(severity) + ": " + one_line(message);
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
