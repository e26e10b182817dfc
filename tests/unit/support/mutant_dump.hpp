#pragma once

// A diagnostic mode of the mutation suites: with ZPOLICY_MUTANT_DUMP=FILE in the
// environment, every mutant a suite tries is appended to FILE with every finding the
// verifier reports on it, trace included. bench/analyzer_identity.sh records this file
// before and after a change to the analyzer, so that a refactoring is shown to change no
// finding, no trace and no kill on any mutant. Without the variable it does nothing.
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "ir/diagnostic.hpp"

namespace zpolicy::test {

inline std::ofstream* mutant_dump() {
  static std::unique_ptr<std::ofstream> file = [] {
    const char* path = std::getenv("ZPOLICY_MUTANT_DUMP");
    return path ? std::make_unique<std::ofstream>(path, std::ios::app) : nullptr;
  }();
  return file.get();
}

// `findings` as the verifier prints them (ir::Diagnostic::report()).
inline void dump_mutant(const std::string& where, const std::string& what,
                        const std::vector<std::string>& findings) {
  std::ofstream* out = mutant_dump();
  if (!out) return;
  *out << "== " << where << ": " << what << " (" << findings.size() << " findings)\n";
  for (const auto& f : findings) *out << f << "\n";
}

inline std::vector<std::string> finding_texts(const std::vector<ir::Diagnostic>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) out.push_back(f.report() + "\n");
  return out;
}

}  // namespace zpolicy::test
