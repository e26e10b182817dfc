// git_url (git_config_keys.hpp): what a remote URL makes the host's git run (red team
// A14B-4), as transport.c (transport_get, url_is_local_not_ssh) and connect.c classify it.
#include "compiler/resolve/git_config_keys.hpp"

namespace zpolicy::compiler {

namespace {

bool scheme_char(char c, bool first) {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  return alpha || (!first && ((c >= '0' && c <= '9') || c == '+' || c == '.' || c == '-'));
}

// git-remote-ext's argv (builtin/remote-ext.c): words end at an unescaped space; `% ` is
// a space, `%%` a percent sign, `%s`/`%S` the service's name (no '/'), and a word that
// starts with `%G` or `%V` is sent in the request, not passed. Each word single-quoted,
// for paths_in_command; none on a placeholder git-remote-ext refuses.
std::optional<std::string> ext_command(std::string_view cmd) {
  std::string out, word;
  bool skip = false;
  auto end_word = [&] {
    if (!skip && !word.empty()) {
      std::string q = "'";
      for (const char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += (out.empty() ? "" : " ") + q + "'";
    }
    word.clear();
    skip = false;
  };
  for (size_t i = 0; i < cmd.size(); ++i) {
    const char c = cmd[i];
    if (c == ' ') {
      end_word();
    } else if (c == '%') {
      if (++i >= cmd.size()) return std::nullopt;
      switch (cmd[i]) {
        case ' ':
        case '%':
          word += cmd[i];
          break;
        case 's':
        case 'S':
          word += "git-upload-pack";
          break;
        case 'G':
        case 'V':
          if (!word.empty()) return std::nullopt;
          skip = true;
          break;
        default:
          return std::nullopt;
      }
    } else {
      word += c;
    }
  }
  end_word();
  return out;
}

// url.c's url_decode: a `%XX` of two hex digits that is not NUL is that byte (git decodes a
// `scheme://` URL before it takes the path: red team A16-4, `file:///ws/p%64A` is `pdA`).
std::string url_decoded(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
      if (hi >= 0 && lo >= 0 && (hi << 4 | lo) > 0) {
        out += static_cast<char>(hi << 4 | lo);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

}  // namespace

GitUrl git_url(std::string_view url) {
  GitUrl out;
  // `<transport>::<address>` runs git-remote-<transport>, found on $PATH; ext's address
  // is a command.
  size_t p = 0;
  while (p < url.size() && scheme_char(url[p], p == 0)) ++p;
  if (p > 0 && url.substr(p, 2) == "::") {
    if (url.substr(0, p) == "ext") {
      out.command = ext_command(url.substr(p + 2));
      if (!out.command) out.unreadable = "git-remote-ext refuses its placeholders";
    }
    return out;
  }
  if (url.substr(0, 7) == "file://") {
    const std::string decoded = url_decoded(url.substr(7));
    if (decoded.empty() || decoded[0] != '/') {
      out.unreadable = "a file:// URL with a host is not read by zpolicy";
      return out;
    }
    out.path = decoded;
    return out;
  }
  if (url.find("://") != std::string_view::npos) return out;  // a network URL
  // scp-like `host:path`: a ':' before the first '/' (url_is_local_not_ssh).
  const size_t colon = url.find(':'), slash = url.find('/');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon < slash))
    return out;
  if (url.empty()) return out;
  if (url[0] == '~' && url.substr(0, 2) != "~/" && url != "~") {
    out.unreadable = "'~user/' (another user's home) is not expanded by zpolicy";
    return out;
  }
  out.path = std::string(url);
  return out;
}

}  // namespace zpolicy::compiler
