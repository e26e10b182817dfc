#include "ir/diagnostic.hpp"

#include <algorithm>

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

std::string Diagnostic::disagreement() const {
  return kind + ": " + probe + ": expected " + expected + ", artifact gives " + actual;
}

std::string Diagnostic::str() const {
  std::string out = one_line(loc.str()) + ": " + to_string(severity) + ": " + one_line(message);
  if (!code.empty()) out += " [" + code + "]";
  return out;
}

std::string Diagnostic::report() const {
  std::string out = loc.str() + ": " + to_string(severity) + ": " + message;
  if (!code.empty() && !is_finding()) out += " [" + code + "]";
  for (const auto& t : trace) out += "\n    " + t;
  return out;
}

Diagnostic finding(const std::string& target, std::string kind, SourceLoc loc, std::string probe,
                   std::string expected, std::string actual, std::vector<std::string> trace) {
  Diagnostic d{"verify-" + target, Severity::Error, std::move(loc),   "",
               std::move(trace),   std::move(kind), std::move(probe), std::move(expected),
               std::move(actual)};
  d.message = target + ": " + d.disagreement();
  return d;
}

namespace {

// Whether `items` holds the diagnostic already. Each is said once: a walk that meets one
// refusal more than once (a git directory read again with the worktree of a populated
// submodule found later, red team A24D-2; an absolute config value judged at each place
// its relative values are taken against) said it each time (tidy 25). A run's diagnostics
// are few: a scan costs nothing next to the walks that made them.
bool said(const std::vector<Diagnostic>& items, Severity severity, const SourceLoc& loc,
          const std::string& message) {
  return std::any_of(items.begin(), items.end(), [&](const Diagnostic& d) {
    return d.code.empty() && d.severity == severity && d.loc == loc && d.message == message;
  });
}

}  // namespace

void Diagnostics::error(SourceLoc loc, std::string message) {
  if (said(items_, Severity::Error, loc, message)) return;
  items_.push_back({"", Severity::Error, std::move(loc), std::move(message)});
}

void Diagnostics::warning(SourceLoc loc, std::string message) {
  if (said(items_, Severity::Warning, loc, message)) return;
  items_.push_back({"", Severity::Warning, std::move(loc), std::move(message)});
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
