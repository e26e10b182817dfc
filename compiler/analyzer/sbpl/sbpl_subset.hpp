#pragma once

// Internal to the SBPL evaluator: the lexical classes and the operations of the subset
// of SBPL that zpolicy emits and the reader in sbpl_evaluator.cpp accepts.

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace zpolicy::compiler::sbpl_subset {

// Characters by class.
struct CharClasses {
  std::array<bool, 256> symbol{};       // in a symbol or integer
  std::array<bool, 256> string_stop{};  // ends a string's scan: '"' or what it may not hold
  std::array<bool, 256> space{};        // what skip_space passes: blanks and comments
  constexpr CharClasses() {
    for (int c = 0; c < 256; ++c)
      symbol[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '*' || c == '_' || c == '.';
    for (unsigned char c : {'"', '\\', '\n', '\0'}) string_stop[c] = true;
    for (unsigned char c : {' ', '\t', '\n', ';'}) space[c] = true;
  }
};
inline constexpr CharClasses kChars;

// Every operation zpolicy may name. A wildcard covers the concrete operations that
// start with its stem, which is how Seatbelt groups them.
inline constexpr std::array kOperations = {
    "file-read*",       "file-read-data",   "file-read-metadata",   "file-read-xattr",
    "file-write*",      "file-write-data",  "file-write-create",    "file-write-unlink",
    "file-write-mode",  "file-write-xattr", "file-write-times",     "file-write-flags",
    "file-write-owner", "file-link",        "file-ioctl",           "file-map-executable",
    "process-exec",     "process-fork",     "process-info*",        "signal",
    "sysctl-read",      "mach-lookup",      "user-preference-read", "ipc-posix-sem",
    "pseudo-tty",       "network*",         "network-bind",         "network-inbound",
    "network-outbound", "system-socket",
};

static_assert(kOperations.size() <= 64, "SbplRule::operation_bits has a bit per operation");

// The bit of a profile operation in SbplRule::operation_bits, 0 for an unknown one.
inline uint64_t operation_bit(std::string_view op) {
  auto it = std::find(kOperations.begin(), kOperations.end(), op);
  return it == kOperations.end() ? 0 : uint64_t{1} << (it - kOperations.begin());
}

// What a filter tests, and so which operations it may qualify: a filter applied to an
// operation whose target is of another kind (a sysctl-name-prefix on file-write*) has no
// meaning the evaluator could vouch for, so the reader refuses it.
enum class TargetKind { Path, Sysctl, MachService, Address, Process, None };

inline TargetKind operation_target(std::string_view op) {
  if (op.starts_with("file-") || op == "process-exec") return TargetKind::Path;
  if (op == "sysctl-read") return TargetKind::Sysctl;
  if (op == "mach-lookup") return TargetKind::MachService;
  if (op.starts_with("network")) return TargetKind::Address;
  if (op == "signal" || op == "process-info*") return TargetKind::Process;
  return TargetKind::None;
}

// The longest path the macOS kernel names in a check (MAXPATHLEN, counting the NUL as
// one of its 1024 bytes): a filter on a longer one can never apply, and refusing it
// bounds what matching a path against its ancestors costs.
inline constexpr size_t kMaxPathBytes = 1023;

// Seatbelt compares paths as strings after resolving them, so a path must already be in
// the one spelling the kernel reports: absolute (or a symbolic variable), no empty, "."
// or ".." component, no trailing slash. A filter on another spelling ("/Users/") would
// match what the evaluator cannot predict.
inline bool normalized_path(std::string_view v) {
  if (v == "/") return true;
  if (v.starts_with("${")) {
    auto close = v.find('}');
    if (close == std::string_view::npos) return false;
    v.remove_prefix(close + 1);
    if (v.empty()) return true;
  }
  if (!v.starts_with('/') || v.ends_with('/')) return false;
  for (size_t start = 1; start <= v.size();) {
    const size_t end = std::min(v.find('/', start), v.size());
    const std::string_view component = v.substr(start, end - start);
    if (component.empty() || component == "." || component == "..") return false;
    start = end + 1;
  }
  return true;
}

// A port as the reader accepts it: "*", or a decimal number 0..65535 without a leading
// zero, so that comparing ports as text compares them as numbers.
inline bool canonical_port(std::string_view port) {
  if (port == "*") return true;
  if (port.empty() || port.size() > 5 || (port.size() > 1 && port.front() == '0')) return false;
  unsigned value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  return value <= 65535;
}

}  // namespace zpolicy::compiler::sbpl_subset
