#pragma once

#include <string>
#include <vector>

namespace zpolicy::tests::kernel {

// `argv` as a JSON array of strings, for the Python job-control harnesses, which take the
// command to run as one argument.
inline std::string json_argv(const std::vector<std::string>& argv) {
  std::string out = "[";
  for (const auto& a : argv) {
    out += out.size() > 1 ? ", \"" : "\"";
    for (char c : a) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    out += '"';
  }
  return out + "]";
}

}  // namespace zpolicy::tests::kernel
