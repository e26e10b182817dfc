#pragma once

#include <string>
#include <vector>

#include "ir/source_location.hpp"

namespace zpolicy::ir {

enum class Severity { Note, Warning, Error };

// One finding, printed in the gcc/clang shape so editors and CI annotate it:
//   policy.yaml:3:5: error: unknown key 'netwrok'; did you mean 'network'?
struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLoc loc;
  std::string message;

  std::string str() const;
};

class Diagnostics {
 public:
  void error(SourceLoc loc, std::string message);
  void warning(SourceLoc loc, std::string message);
  bool has_errors() const;
  const std::vector<Diagnostic>& all() const { return items_; }
  std::string str() const;  // one line per diagnostic, newline-terminated

 private:
  std::vector<Diagnostic> items_;
};

const char* to_string(Severity s);

}  // namespace zpolicy::ir
