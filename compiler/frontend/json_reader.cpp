#include "compiler/frontend/json_reader.hpp"

#include <charconv>

namespace zpolicy::compiler::json {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  std::optional<Value> document(ParseError* error) {
    try {
      Value v = value(0);
      skip_ws();
      if (pos_ != s_.size()) fail("unexpected text after the document");
      return v;
    } catch (const ParseError& e) {
      if (error) *error = e;
      return std::nullopt;
    }
  }

 private:
  [[noreturn]] void fail(std::string message) { throw ParseError{line_, col_, std::move(message)}; }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  char next() {
    if (pos_ >= s_.size()) fail("unexpected end of input");
    const char c = s_[pos_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }
  void skip_ws() {
    while (pos_ < s_.size() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      next();
  }
  void expect(std::string_view word) {
    for (char c : word)
      if (next() != c) fail("invalid literal");
  }

  Value value(int depth) {
    if (depth > 64) fail("nesting too deep");
    skip_ws();
    Value v;
    v.line = line_;
    v.col = col_;
    const char c = peek();
    if (c == '{') {
      v.kind = Value::Kind::Object;
      next();
      skip_ws();
      if (peek() == '}') {
        next();
        return v;
      }
      for (;;) {
        skip_ws();
        if (peek() != '"') fail("expected a string key");
        const int kl = line_, kc = col_;
        std::string key = string();
        for (const auto& m : v.members)
          if (m.first == key) throw ParseError{kl, kc, "duplicate key '" + key + "'"};
        skip_ws();
        if (next() != ':') fail("expected ':'");
        v.members.emplace_back(std::move(key), value(depth + 1));
        skip_ws();
        const char d = next();
        if (d == '}') return v;
        if (d != ',') fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.kind = Value::Kind::Array;
      next();
      skip_ws();
      if (peek() == ']') {
        next();
        return v;
      }
      for (;;) {
        v.items.push_back(value(depth + 1));
        skip_ws();
        const char d = next();
        if (d == ']') return v;
        if (d != ',') fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.kind = Value::Kind::String;
      v.text = string();
      return v;
    }
    if (c == 't' || c == 'f') {
      v.kind = Value::Kind::Bool;
      v.boolean = c == 't';
      expect(v.boolean ? "true" : "false");
      return v;
    }
    if (c == 'n') {
      expect("null");
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Value::Kind::Number;
      v.text = number();
      return v;
    }
    fail("expected a value");
  }

  std::string number() {
    std::string t;
    auto digits = [&] {
      if (!(peek() >= '0' && peek() <= '9')) fail("expected a digit");
      while (peek() >= '0' && peek() <= '9') t += next();
    };
    if (peek() == '-') t += next();
    if (peek() == '0') {
      t += next();
    } else {
      digits();
    }
    if (peek() == '.') {
      t += next();
      digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      t += next();
      if (peek() == '+' || peek() == '-') t += next();
      digits();
    }
    return t;
  }

  void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  uint32_t hex4() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = next();
      v <<= 4;
      if (h >= '0' && h <= '9') v |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') v |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') v |= static_cast<uint32_t>(h - 'A' + 10);
      else fail("bad \\u escape");
    }
    return v;
  }

  std::string string() {
    next();  // the opening quote
    std::string out;
    for (;;) {
      const char c = next();
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = next();
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {
            if (next() != '\\' || next() != 'u') fail("unpaired surrogate");
            const uint32_t lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("unpaired surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("unpaired surrogate");
          }
          append_utf8(out, cp);
          break;
        }
        default:
          fail("bad escape");
      }
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

}  // namespace

const Value* Value::find(std::string_view key) const {
  for (const auto& m : members)
    if (m.first == key) return &m.second;
  return nullptr;
}

std::optional<uint64_t> Value::as_u64() const {
  if (kind != Kind::Number) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

const char* Value::kind_name() const {
  switch (kind) {
    case Kind::Null: return "null";
    case Kind::Bool: return "a boolean";
    case Kind::Number: return "a number";
    case Kind::String: return "a string";
    case Kind::Array: return "an array";
    case Kind::Object: return "an object";
  }
  return "a value";
}

std::optional<Value> parse(std::string_view text, ParseError* error) {
  return Parser(text).document(error);
}

}  // namespace zpolicy::compiler::json
