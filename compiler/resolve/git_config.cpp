#include "compiler/resolve/git_config.hpp"

namespace zpolicy::compiler {

std::string GitConfigEntry::section() const { return var.substr(0, var.find('.')); }

std::optional<std::string> GitConfigEntry::subsection() const {
  const auto first = var.find('.'), last = var.rfind('.');
  if (first == std::string::npos || first == last) return std::nullopt;
  return var.substr(first + 1, last - first - 1);
}

std::string GitConfigEntry::name() const {
  const auto last = var.rfind('.');
  return last == std::string::npos ? var : var.substr(last + 1);
}

namespace {

// git's own ctype (git-compat-util.h), not the locale's: space, tab, CR and LF.
bool git_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool git_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool git_alnum(int c) { return git_alpha(c) || (c >= '0' && c <= '9'); }
bool key_char(int c) { return git_alnum(c) || c == '-'; }
char lower(int c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); }

// A cursor that reads like config.c's get_next_char: CRLF is one '\n', and the end of the
// text reads as '\n' with `eof` set.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
  }

  int next() {
    last_line_ = line_;
    if (pos_ >= text_.size()) {
      eof_ = true;
      return '\n';
    }
    int c = static_cast<unsigned char>(text_[pos_++]);
    if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') c = text_[pos_++];
    if (c == '\n') ++line_;
    return c;
  }
  bool eof() const { return eof_; }
  int line() const { return line_; }
  // The line of the character read last: where git reports a bad line.
  int last_line() const { return last_line_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int last_line_ = 1;
  bool eof_ = false;
};

// `[s "sub"]` after the section name and the first whitespace `c` (get_extended_base_var).
bool extended_section(Reader& in, std::string& var, int c) {
  do {
    if (c == '\n') return false;
    c = in.next();
  } while (git_space(c));
  if (c != '"') return false;
  var += '.';
  for (;;) {
    c = in.next();
    if (c == '\n') return false;
    if (c == '"') break;
    if (c == '\\') {
      c = in.next();
      if (c == '\n') return false;
    }
    var += static_cast<char>(c);
  }
  return in.next() == ']';
}

// After '[' (get_base_var).
bool section_header(Reader& in, std::string& var) {
  for (;;) {
    const int c = in.next();
    if (in.eof()) return false;
    if (c == ']') return true;
    if (git_space(c)) return extended_section(in, var, c);
    if (!key_char(c) && c != '.') return false;
    var += lower(c);
  }
}

// After '=' (parse_value); none on an error.
std::optional<std::string> value(Reader& in) {
  std::string out;
  bool quote = false, comment = false;
  int space = 0;
  for (;;) {
    int c = in.next();
    if (c == '\n') {
      if (quote) return std::nullopt;
      return out;
    }
    if (comment) continue;
    if (git_space(c) && !quote) {
      if (!out.empty()) ++space;
      continue;
    }
    if (!quote && (c == ';' || c == '#')) {
      comment = true;
      continue;
    }
    out.append(static_cast<size_t>(space), ' ');
    space = 0;
    if (c == '\\') {
      c = in.next();
      switch (c) {
        case '\n':
          continue;
        case 't':
          c = '\t';
          break;
        case 'b':
          c = '\b';
          break;
        case 'n':
          c = '\n';
          break;
        case '\\':
        case '"':
          break;
        default:
          return std::nullopt;
      }
      out += static_cast<char>(c);
      continue;
    }
    if (c == '"') {
      quote = !quote;
      continue;
    }
    out += static_cast<char>(c);
  }
}

}  // namespace

GitConfig parse_git_config(std::string_view text) {
  GitConfig cfg;
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    int line = 1;
    for (size_t i = 0; i < nul; ++i) line += text[i] == '\n';
    cfg.error = GitConfigError{line, "a NUL byte"};
    return cfg;
  }
  Reader in(text);
  std::string stem;  // "section." or "section.subsection.", empty before any header
  bool comment = false;
  auto bad = [&](int line) {
    if (!cfg.error) cfg.error = GitConfigError{line, "bad config line"};
    return cfg;
  };
  for (;;) {
    const int start = in.line();
    int c = in.next();
    if (c == '\n') {
      if (in.eof()) return cfg;
      comment = false;
      continue;
    }
    if (comment || git_space(c)) continue;
    if (c == '#' || c == ';') {
      comment = true;
      continue;
    }
    if (c == '[') {
      stem.clear();
      if (!section_header(in, stem) || stem.empty()) return bad(in.last_line());
      stem += '.';
      continue;
    }
    if (!git_alpha(c)) return bad(in.last_line());
    GitConfigEntry e{stem + lower(c), std::nullopt, start};
    for (;;) {
      c = in.next();
      if (in.eof() || !key_char(c)) break;
      e.var += lower(c);
    }
    while (c == ' ' || c == '\t') c = in.next();
    if (c != '\n') {
      if (c != '=') return bad(in.last_line());
      e.value = value(in);
      if (!e.value) return bad(in.last_line());
    }
    cfg.entries.push_back(std::move(e));
  }
}

}  // namespace zpolicy::compiler
