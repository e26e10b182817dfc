#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/diagnostic.hpp"

namespace zpolicy::compiler {

// A YAML document as a plain tree with a source position on every node. Built from
// yaml-cpp's event stream rather than YAML::Node so that duplicate keys stay visible,
// aliases are refused before they can expand, and depth and size stay bounded.
struct YamlNode {
  enum class Kind { Null, Scalar, Sequence, Map };
  Kind kind = Kind::Null;
  int line = 0;  // 1-based
  int col = 0;   // 1-based
  std::string value;  // scalars
  bool quoted = false;  // a quoted scalar is always a string, never a number or bool
  std::vector<YamlNode> items;                          // sequences
  std::vector<std::pair<YamlNode, YamlNode>> entries;   // maps, in document order
};

struct YamlLimits {
  size_t max_bytes = 1 << 20;
  int max_depth = 32;
  size_t max_nodes = 100000;
};

// Parses one YAML document. On failure returns nullptr and records located errors.
std::unique_ptr<YamlNode> parse_yaml(std::string_view text, const std::string& file,
                                     ir::Diagnostics& diags, const YamlLimits& limits = {});

}  // namespace zpolicy::compiler
