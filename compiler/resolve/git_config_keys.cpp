#include "compiler/resolve/git_config_keys.hpp"

#include <algorithm>
#include <array>

namespace zpolicy::compiler {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

}  // namespace

GitConfigRole git_config_role(const GitConfigEntry& e) {
  const std::string section = e.section(), name = e.name();
  const auto sub = e.subsection();
  if (e.var == "core.hookspath") return GitConfigRole::HooksDir;
  if (e.var == "core.worktree") return GitConfigRole::WorkTree;
  if (e.var == "include.path" || (section == "includeif" && sub && name == "path"))
    return GitConfigRole::Include;
  const bool bang = e.value && !e.value->empty() && e.value->front() == '!';
  if (section == "alias" || (section == "submodule" && name == "update"))
    return bang ? GitConfigRole::Command : GitConfigRole::None;
  if (section == "pager" && !sub) return GitConfigRole::Command;
  if (one_of(section, {"difftool", "mergetool", "browser", "man", "guitool"}) && sub &&
      one_of(name, {"path", "cmd"}))
    return GitConfigRole::Command;
  if (ends_with(name, "command") || ends_with(name, "cmd")) return GitConfigRole::Command;
  if (one_of(name, {"editor", "pager", "askpass", "gitproxy", "fsmonitor", "external", "clean",
                    "smudge", "process", "driver", "textconv", "helper", "program", "tunnel",
                    "browser", "viewer", "httpd", "uploadpack", "receivepack",
                    "packobjectshook", "smtpserver", "difffilter"}))
    return GitConfigRole::Command;
  return GitConfigRole::None;
}

CommandPaths paths_in_command(std::string_view value) {
  static constexpr std::string_view kSeparators = " \t\n\r'\"`;&|<>()=:!";
  static constexpr std::string_view kBlanks = " \t\n\r";
  CommandPaths out;
  // A backslash joins what the split below separates (`a\ b/c` is one word to a shell).
  if (value.find('\\') != std::string_view::npos && value.find('/') != std::string_view::npos) {
    out.unreadable = std::string(value);
    return out;
  }
  auto add = [&](std::string word) {
    if (word.find('/') == std::string::npos) return;
    const bool tilde_user = word[0] == '~' && word.rfind("~/", 0) != 0;
    if (word.find_first_of("$*?[") != std::string::npos || tilde_user) {
      if (!out.unreadable) out.unreadable = word;
      return;
    }
    out.words.push_back(std::move(word));
  };
  // A quoted word with blanks in it ('my tools/x') is one path to a shell; the split
  // below also yields its pieces, which is more, never less.
  for (size_t open = value.find_first_of("'\""); open != std::string_view::npos;) {
    const size_t close = value.find(value[open], open + 1);
    if (close == std::string_view::npos) break;
    const std::string_view quoted = value.substr(open + 1, close - open - 1);
    bool plain = quoted.find_first_of(kBlanks) != std::string_view::npos;
    for (const char c : quoted)
      if (kSeparators.find(c) != std::string_view::npos && kBlanks.find(c) == std::string_view::npos)
        plain = false;
    if (plain) add(std::string(quoted));
    open = value.find_first_of("'\"", close + 1);
  }
  size_t at = 0;
  while (at < value.size()) {
    const size_t start = value.find_first_not_of(kSeparators, at);
    if (start == std::string_view::npos) break;
    size_t end = value.find_first_of(kSeparators, start);
    if (end == std::string_view::npos) end = value.size();
    add(std::string(value.substr(start, end - start)));
    at = end;
  }
  return out;
}

}  // namespace zpolicy::compiler
