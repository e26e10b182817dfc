#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zpolicy::compiler {

// One variable of a git config file as git's own parser (config.c, git_parse_source)
// builds it: `var` is "section.name" or "section.subsection.name", section and name
// lowercased, a quoted subsection (`[s "Sub"]`) kept verbatim, a legacy one (`[s.Sub]`)
// lowercased; a key before any section header has no section ("name"). `value` is none
// for a key written without `=` (git's boolean true). `line` is the line the key starts on.
struct GitConfigEntry {
  std::string var;
  std::optional<std::string> value;
  int line = 0;

  std::string section() const;                    // up to the first '.'
  std::optional<std::string> subsection() const;  // between the first and the last '.'
  std::string name() const;                       // after the last '.'
};

// A file git refuses ("bad config line N"), or one zpolicy will not interpret: a NUL byte
// (git's parser would cut the value at it, so the value seen depends on the reader).
struct GitConfigError {
  int line = 0;
  std::string what;
};

struct GitConfig {
  std::vector<GitConfigEntry> entries;  // in file order
  std::optional<GitConfigError> error;  // the entries before a bad line are kept
};

// Parses `text` exactly as git 2.x does: `#` and `;` comments, whitespace trimmed around
// keys and values, each unquoted whitespace character inside a value one space, `"`
// quoting, the escapes \n \t \b \\ \" and backslash-newline continuation (any other
// escape is an error), CRLF line ends, a leading UTF-8 byte-order mark, and a key on the
// same line as its section header.
GitConfig parse_git_config(std::string_view text);

}  // namespace zpolicy::compiler
