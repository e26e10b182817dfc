#include "cli/json.hpp"

#include <algorithm>
#include <cstdio>

namespace zpolicy::cli {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

namespace {

std::string base64(std::string_view in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                 (static_cast<unsigned char>(in[i + 1]) << 8) | static_cast<unsigned char>(in[i + 2]);
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += i + 1 < in.size() ? t[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace

std::string artifacts_json(const std::string& target,
                           const std::vector<compiler::Artifact>& arts) {
  std::vector<const compiler::Artifact*> sorted;
  for (const auto& a : arts) sorted.push_back(&a);
  std::sort(sorted.begin(), sorted.end(),
            [](auto* a, auto* b) { return a->name < b->name; });
  std::string out = "{\"target\": " + json_string(target) + ", \"artifacts\": {";
  for (size_t i = 0; i < sorted.size(); ++i) {
    const auto& a = *sorted[i];
    out += (i ? ", " : "") + json_string(a.name) + ": ";
    out += a.binary ? "{\"base64\": \"" + base64(a.content) + "\"}" : json_string(a.content);
  }
  return out + "}}\n";
}

}  // namespace zpolicy::cli
