#include "compiler/frontend/yaml_tree.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <vector>

namespace zpolicy::compiler {
namespace {

// Thrown from the event handler to stop the parser at the first structural refusal.
struct Refusal {
  int line, col;
  std::string reason;
};

class TreeBuilder : public YAML::EventHandler {
 public:
  explicit TreeBuilder(const YamlLimits& limits) : limits_(limits) {}

  std::unique_ptr<YamlNode> take() { return std::move(root_); }
  int documents() const { return documents_; }

  void OnDocumentStart(const YAML::Mark&) override { ++documents_; }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    check_anchor(mark, anchor);
    YamlNode n;
    n.kind = YamlNode::Kind::Null;
    place(mark, std::move(n));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    throw Refusal{mark.line + 1, mark.column + 1,
                  "YAML aliases are not allowed in a policy (each rule is written out)"};
  }
  void OnAnchor(const YAML::Mark& mark, const std::string&) override {
    throw Refusal{mark.line + 1, mark.column + 1, "YAML anchors are not allowed in a policy"};
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    check_anchor(mark, anchor);
    check_tag(mark, tag);
    YamlNode n;
    n.kind = YamlNode::Kind::Scalar;
    n.value = value;
    n.quoted = (tag == "!");
    place(mark, std::move(n));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    check_anchor(mark, anchor);
    check_tag(mark, tag);
    open(mark, YamlNode::Kind::Sequence);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    check_anchor(mark, anchor);
    check_tag(mark, tag);
    open(mark, YamlNode::Kind::Map);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    YamlNode node;
    bool have_key = false;
    YamlNode key;
  };

  void check_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor)
      throw Refusal{mark.line + 1, mark.column + 1, "YAML anchors are not allowed in a policy"};
  }
  void check_tag(const YAML::Mark& mark, const std::string& tag) {
    if (!tag.empty() && tag != "?" && tag != "!")
      throw Refusal{mark.line + 1, mark.column + 1, "YAML tags are not allowed ('" + tag + "')"};
  }
  void count(const YAML::Mark& mark) {
    if (++nodes_ > limits_.max_nodes)
      throw Refusal{mark.line + 1, mark.column + 1,
                    "policy has more than " + std::to_string(limits_.max_nodes) + " nodes"};
  }
  void open(const YAML::Mark& mark, YamlNode::Kind kind) {
    count(mark);
    if (static_cast<int>(stack_.size()) >= limits_.max_depth)
      throw Refusal{mark.line + 1, mark.column + 1,
                    "nesting deeper than " + std::to_string(limits_.max_depth) + " levels"};
    Frame f;
    f.node.kind = kind;
    f.node.line = mark.line + 1;
    f.node.col = mark.column + 1;
    stack_.push_back(std::move(f));
  }
  void close() {
    YamlNode done = std::move(stack_.back().node);
    stack_.pop_back();
    attach(std::move(done));
  }
  void place(const YAML::Mark& mark, YamlNode n) {
    count(mark);
    n.line = mark.line + 1;
    n.col = mark.column + 1;
    attach(std::move(n));
  }
  void attach(YamlNode n) {
    if (stack_.empty()) {
      if (!root_) root_ = std::make_unique<YamlNode>(std::move(n));
      return;
    }
    Frame& top = stack_.back();
    if (top.node.kind == YamlNode::Kind::Sequence) {
      top.node.items.push_back(std::move(n));
    } else if (!top.have_key) {
      top.key = std::move(n);
      top.have_key = true;
    } else {
      // An empty value has no position of its own (yaml-cpp marks the next token, often
      // on a later line), so it is reported at its key.
      if (n.kind == YamlNode::Kind::Null) n.line = top.key.line, n.col = top.key.col;
      top.node.entries.emplace_back(std::move(top.key), std::move(n));
      top.have_key = false;
    }
  }

  const YamlLimits& limits_;
  std::vector<Frame> stack_;
  std::unique_ptr<YamlNode> root_;
  size_t nodes_ = 0;
  int documents_ = 0;
};

// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0 when it is malformed.
size_t utf8_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char b = byte(0);
  if (b < 0x80) return 1;
  size_t len = b >= 0xC2 && b <= 0xDF   ? 2
               : b >= 0xE0 && b <= 0xEF ? 3
               : b >= 0xF0 && b <= 0xF4 ? 4
                                        : 0;
  if (len == 0 || i + len > s.size()) return 0;
  // The second byte's range depends on the first: this is what excludes overlong
  // forms (E0, F0), surrogates (ED) and code points above U+10FFFF (F4).
  unsigned char lo = b == 0xE0 ? 0xA0 : b == 0xF0 ? 0x90 : 0x80;
  unsigned char hi = b == 0xED ? 0x9F : b == 0xF4 ? 0x8F : 0xBF;
  if (byte(1) < lo || byte(1) > hi) return 0;
  for (size_t k = 2; k < len; ++k)
    if ((byte(k) & 0xC0) != 0x80) return 0;
  return len;
}

// Rejects what no policy contains before the YAML parser sees it: oversized files,
// NUL and other control bytes, and bytes that are not UTF-8.
bool screen_bytes(std::string_view text, const std::string& file, const YamlLimits& limits,
                  ir::Diagnostics& diags) {
  if (text.size() > limits.max_bytes) {
    diags.error({file, 0, 0}, "policy file is larger than the limit of " +
                                  std::to_string(limits.max_bytes) + " bytes");
    return false;
  }
  int line = 1, col = 1;
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      col = 1;
      ++i;
      continue;
    }
    if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7F) {
      diags.error({file, line, col}, c == 0 ? "NUL byte in policy file"
                                            : "control character in policy file (binary input?)");
      return false;
    }
    size_t len = utf8_length(text, i);
    if (len == 0) {
      diags.error({file, line, col}, "policy file is not valid UTF-8");
      return false;
    }
    // Columns count bytes, as yaml-cpp's marks do, so that every diagnostic agrees.
    i += len;
    col += static_cast<int>(len);
  }
  return true;
}

// The 0-based column of a tab in the indentation of 0-based line `line` (or of the
// nearest line above it that holds one), if any: what makes yaml-cpp report "illegal map
// value" or "illegal block entry" for a line that looks well indented in an editor.
std::optional<int> indentation_tab(std::string_view text, int line) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  for (int l = std::min<int>(line, static_cast<int>(lines.size()) - 1); l >= 0 && l >= line - 1; --l) {
    const std::string_view s = lines[static_cast<size_t>(l)];
    const size_t content = s.find_first_not_of(" \t");
    if (content == std::string_view::npos) continue;
    const size_t tab = s.substr(0, content).find('\t');
    if (tab != std::string_view::npos) return static_cast<int>(tab);
  }
  return std::nullopt;
}

}  // namespace

std::unique_ptr<YamlNode> parse_yaml(std::string_view text, const std::string& file,
                                     ir::Diagnostics& diags, const YamlLimits& limits) {
  if (!screen_bytes(text, file, limits, diags)) return nullptr;
  std::istringstream in{std::string(text)};
  TreeBuilder builder(limits);
  try {
    YAML::Parser parser(in);
    if (!parser.HandleNextDocument(builder)) {
      diags.error({file, 0, 0}, "policy file is empty");
      return nullptr;
    }
    TreeBuilder second(limits);
    if (parser.HandleNextDocument(second)) {
      diags.error({file, 0, 0}, "policy file holds more than one YAML document");
      return nullptr;
    }
  } catch (const Refusal& r) {
    diags.error({file, r.line, r.col}, r.reason);
    return nullptr;
  } catch (const YAML::DeepRecursion& e) {
    diags.error({file, e.mark.line + 1, e.mark.column + 1}, "nesting too deep");
    return nullptr;
  } catch (const YAML::Exception& e) {
    if (auto tab = indentation_tab(text, e.mark.line)) {
      diags.error({file, e.mark.line + 1, *tab + 1},
                  "tabs are not allowed for indentation in YAML; indent with spaces");
      return nullptr;
    }
    diags.error({file, e.mark.line + 1, e.mark.column + 1}, "YAML syntax error: " + e.msg);
    return nullptr;
  }
  auto root = builder.take();
  if (!root) diags.error({file, 0, 0}, "policy file is empty");
  return root;
}

}  // namespace zpolicy::compiler
