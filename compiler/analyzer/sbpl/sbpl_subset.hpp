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

}  // namespace zpolicy::compiler::sbpl_subset
