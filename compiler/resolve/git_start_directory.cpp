#include "compiler/resolve/git_start_directory.hpp"

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "compiler/resolve/git_config.hpp"
#include "compiler/resolve/gitdir.hpp"
#include "ir/path.hpp"

namespace zpolicy::compiler {

namespace {

struct SetupKey {
  GitConfigEntry entry;
  std::string file;
  std::string shown() const {
    return entry.var + (entry.value ? " = '" + *entry.value + "'" : std::string()) +
           " (git config '" + file + "' line " + std::to_string(entry.line) + ")";
  }
};

// The entries of the config file `path` as git's setup reads them, through a symlink too
// (`mono/.git/config -> ../cfg/mono-config`); none when nothing is there. Where it cannot be
// read (a symlink the walk cannot vouch for, a FIFO, unreadable), what it says
// is unknown: `unknown` gets why, and git may stay where it was started. Read through the
// link before, as a symlink was taken for "no entries": a linked config saying `core.bare =
// true` and `core.hooksPath = hooks` went unjudged, the command wrote
// `app/hooks/reference-transaction`, and the host's `git update-ref` in `app` ran it (review
// R24-2).
std::vector<GitConfigEntry> entries_of(
    const std::string& path,
    const std::function<std::optional<std::string>(const std::string&)>& canonical,
    std::optional<std::string>& unknown) {
  const auto c = canonical(path);
  if (!c) {
    if (!unknown)
      unknown = "what '" + path + "' may say (git's setup reads core.bare and core.worktree " +
                "there, and it passes through a link zpolicy cannot vouch for)";
    return {};
  }
  const GitConfigFile file = read_git_config_file(*c);
  // git reads nothing from a directory there, and dies: it runs nothing in that repository.
  if (file.status == GitConfigFile::Status::Missing ||
      file.status == GitConfigFile::Status::Directory)
    return {};
  if (file.status != GitConfigFile::Status::Read) {
    if (!unknown)
      unknown = "what '" + path + "' may say (git's setup reads core.bare and core.worktree " +
                "there, and zpolicy cannot read it as a regular file)";
    return {};
  }
  return parse_git_config(file.text).entries;
}

}  // namespace

bool git_config_true(const std::optional<std::string>& value) {
  if (!value) return true;
  std::string v = *value;
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "true" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "no" || v == "off" || v.empty()) return false;
  // git_parse_signed: an integer with an optional unit (k, m, g), true unless zero.
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 0);
  if (end != v.c_str() &&
      (*end == '\0' ||
       (std::string_view("kmg").find(*end) != std::string_view::npos && end[1] == '\0')))
    return n != 0;
  return true;
}

std::optional<std::string> git_stays_where_started(
    const std::string& gitdir, const std::string& common, const std::vector<std::string>& tops,
    const std::function<std::optional<std::string>(const std::string&)>& canonical) {
  if (tops.empty()) return std::nullopt;
  const std::string common_config = common + "/config";
  std::optional<std::string> unknown;
  const std::vector<GitConfigEntry> common_entries = entries_of(common_config, canonical, unknown);
  bool worktree_config = false;
  for (const auto& e : common_entries)
    if (e.var == "extensions.worktreeconfig") worktree_config = git_config_true(e.value);
  std::vector<std::pair<std::string, std::vector<GitConfigEntry>>> files;
  // A linked worktree (a `commondir`) takes neither key from the common config, unless
  // worktreeConfig is on (setup.c check_repository_format_gently: has_common).
  if (common == gitdir || worktree_config) files.emplace_back(common_config, common_entries);
  if (worktree_config) {
    const std::string own = gitdir + "/config.worktree";
    files.emplace_back(own, entries_of(own, canonical, unknown));
  }
  if (unknown) return unknown;
  std::optional<SetupKey> bare, worktree;
  for (const auto& [file, entries] : files)
    for (const auto& e : entries) {
      if (e.var == "core.bare") bare = SetupKey{e, file};
      if (e.var == "core.worktree") worktree = SetupKey{e, file};
    }
  if (bare && git_config_true(bare->entry.value)) return bare->shown();
  if (!worktree) return std::nullopt;
  // Relative to the git directory (setup_explicit_git_dir: chdir(gitdir), chdir(worktree)).
  const std::optional<std::string>& value = worktree->entry.value;
  const auto held = [&]() -> std::optional<std::string> {
    if (!value || value->empty()) return std::nullopt;
    return canonical((*value)[0] == '/' ? *value : gitdir + "/" + *value);
  }();
  for (const auto& top : tops) {
    const auto t = canonical(top);
    if (!held || !t || !ir::path_within(*held, *t))
      return worktree->shown() + ", which does not hold '" + top + "'";
  }
  return std::nullopt;
}

}  // namespace zpolicy::compiler
