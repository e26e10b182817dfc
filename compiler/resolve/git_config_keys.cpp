#include "compiler/resolve/git_config_keys.hpp"

#include <algorithm>

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

}  // namespace zpolicy::compiler
