// git_options (git_options.hpp): the option tables of the git subcommands zpolicy reads,
// and the matcher.
#include "compiler/resolve/git_options.hpp"

#include <algorithm>
#include <utility>

namespace zpolicy::compiler::git_options {

namespace {

constexpr Takes V = Takes::Value, O = Takes::Optional;
constexpr Means Repo = Means::Repository, Cmd = Means::Command, Dir = Means::Directory;

// The options of the subcommands that connect to a repository, complete for git 2.39
// (`git <cmd> -h` and the hidden ones of builtin/<cmd>.c), with the value options later
// gits added (`--ref-format`, `--revision`, `--bundle-uri`): an option not listed refuses,
// since zpolicy cannot tell which word is the repository past it (red team A15C-2..5).
constexpr Option kPush[] = {
    {"verbose", 'v'}, {"quiet", 'q'}, {"repo", 0, V, Repo}, {"all", 0}, {"branches", 0},
    {"mirror", 0}, {"delete", 'd'}, {"tags", 0}, {"dry-run", 'n'}, {"porcelain", 0},
    {"force", 'f'}, {"force-with-lease", 0, O}, {"force-if-includes", 0},
    {"recurse-submodules", 0, V}, {"thin", 0}, {"receive-pack", 0, V, Cmd},
    {"exec", 0, V, Cmd}, {"set-upstream", 'u'}, {"progress", 0}, {"prune", 0},
    {"no-verify", 0}, {"follow-tags", 0}, {"signed", 0, O}, {"atomic", 0},
    {"push-option", 'o', V}, {"ipv4", '4'}, {"ipv6", '6'}};
constexpr Option kFetch[] = {
    {"verbose", 'v'}, {"quiet", 'q'}, {"all", 0}, {"set-upstream", 0}, {"append", 'a'},
    {"atomic", 0}, {"upload-pack", 0, V, Cmd}, {"force", 'f'}, {"multiple", 'm'},
    {"tags", 't'}, {"", 'n'}, {"jobs", 'j', V}, {"prefetch", 0}, {"prune", 'p'},
    {"prune-tags", 'P'}, {"recurse-submodules", 0, O}, {"dry-run", 0}, {"porcelain", 0},
    {"write-fetch-head", 0}, {"keep", 'k'}, {"update-head-ok", 'u'}, {"progress", 0},
    {"depth", 0, V}, {"shallow-since", 0, V}, {"shallow-exclude", 0, V}, {"deepen", 0, V},
    {"unshallow", 0}, {"refetch", 0}, {"update-shallow", 0}, {"refmap", 0, V},
    {"server-option", 'o', V}, {"ipv4", '4'}, {"ipv6", '6'}, {"negotiation-tip", 0, V},
    {"negotiate-only", 0}, {"filter", 0, V}, {"auto-maintenance", 0}, {"auto-gc", 0},
    {"show-forced-updates", 0}, {"write-commit-graph", 0}, {"stdin", 0},
    {"recurse-submodules-default", 0, V}, {"submodule-prefix", 0, V}};
constexpr Option kPull[] = {
    {"verbose", 'v'}, {"quiet", 'q'}, {"progress", 0}, {"recurse-submodules", 0, O},
    {"rebase", 'r', O}, {"", 'n'}, {"stat", 0}, {"summary", 0}, {"log", 0, O},
    {"signoff", 0, O}, {"squash", 0}, {"commit", 0}, {"edit", 0}, {"cleanup", 0, V},
    {"ff", 0}, {"ff-only", 0}, {"verify", 0}, {"verify-signatures", 0}, {"autostash", 0},
    {"strategy", 's', V}, {"strategy-option", 'X', V}, {"gpg-sign", 'S', O},
    {"allow-unrelated-histories", 0}, {"all", 0}, {"append", 'a'},
    {"upload-pack", 0, V, Cmd}, {"force", 'f'}, {"tags", 't'}, {"prune", 'p'},
    {"jobs", 'j', O}, {"dry-run", 0}, {"keep", 'k'}, {"depth", 0, V},
    {"shallow-since", 0, V}, {"shallow-exclude", 0, V}, {"deepen", 0, V}, {"unshallow", 0},
    {"update-shallow", 0}, {"refmap", 0, V}, {"server-option", 'o', V}, {"ipv4", '4'},
    {"ipv6", '6'}, {"negotiation-tip", 0, V}, {"show-forced-updates", 0},
    {"set-upstream", 0}};
constexpr Option kLsRemote[] = {
    {"quiet", 'q'}, {"upload-pack", 0, V, Cmd}, {"exec", 0, V, Cmd}, {"tags", 't'},
    {"heads", 'h'}, {"branches", 'b'}, {"refs", 0}, {"get-url", 0}, {"sort", 0, V},
    {"exit-code", 0}, {"symref", 0}, {"server-option", 'o', V}};
constexpr Option kClone[] = {
    {"verbose", 'v'}, {"quiet", 'q'}, {"progress", 0}, {"reject-shallow", 0},
    {"no-checkout", 'n'}, {"bare", 0}, {"mirror", 0}, {"local", 'l'}, {"no-hardlinks", 0},
    {"shared", 's'}, {"recurse-submodules", 0, O}, {"recursive", 0, O}, {"jobs", 'j', V},
    {"template", 0, V, Dir}, {"reference", 0, V}, {"reference-if-able", 0, V},
    {"dissociate", 0}, {"origin", 'o', V}, {"branch", 'b', V}, {"upload-pack", 'u', V, Cmd},
    {"depth", 0, V}, {"shallow-since", 0, V}, {"shallow-exclude", 0, V},
    {"single-branch", 0}, {"no-tags", 0}, {"shallow-submodules", 0},
    {"separate-git-dir", 0, V}, {"config", 'c', V}, {"server-option", 0, V}, {"ipv4", '4'},
    {"ipv6", '6'}, {"filter", 0, V}, {"also-filter-submodules", 0}, {"remote-submodules", 0},
    {"sparse", 0}, {"bundle-uri", 0, V}, {"ref-format", 0, V}, {"revision", 0, V}};
constexpr Option kSendPack[] = {
    {"verbose", 'v'}, {"quiet", 'q'}, {"receive-pack", 0, V, Cmd}, {"exec", 0, V, Cmd},
    {"remote", 0, V}, {"all", 0}, {"dry-run", 'n'}, {"mirror", 0}, {"force", 'f'},
    {"signed", 0, O}, {"push-option", 0, V}, {"progress", 0}, {"thin", 0}, {"atomic", 0},
    {"stateless-rpc", 0}, {"stdin", 0}, {"helper-status", 0}, {"force-with-lease", 0, O},
    {"force-if-includes", 0}};
// receive-pack takes the repository it runs (and whose hooks it runs) as its operand
// (builtin/receive-pack.c; red team A16-8).
constexpr Option kReceivePack[] = {{"quiet", 0}, {"stateless-rpc", 0}, {"http-backend-info-refs", 0},
                                   {"advertise-refs", 0}, {"reject-thin-pack-for-testing", 0}};
// `git remote`'s subcommands that name a repository or change which remotes exist.
constexpr Option kRemoteAdd[] = {{"fetch", 'f'}, {"tags", 0}, {"track", 't', V},
                                 {"master", 'm', V}, {"mirror", 0, O}};
constexpr Option kRemoteSetUrl[] = {{"push", 0}, {"add", 0}, {"delete", 0}};
constexpr Option kRemoteOther[] = {{"prune", 'p'}, {"dry-run", 'n'}, {"progress", 0}};
// `git submodule add` (git-submodule.sh, builtin/submodule--helper.c).
constexpr Option kSubmoduleAdd[] = {{"quiet", 'q'},       {"branch", 'b', V},    {"force", 'f'},
                                    {"name", 0, V},       {"reference", 0, V},   {"depth", 0, V},
                                    {"progress", 0},      {"dissociate", 0}};
// contrib's git-subtree (`git rev-parse --parseopt`, which takes prefixes too): `add`,
// `pull` and `push` take `<repository> <ref>`.
constexpr Option kSubtree[] = {
    {"prefix", 'P', V}, {"message", 'm', V}, {"branch", 'b', V}, {"onto", 0, V},
    {"annotate", 0, V}, {"squash", 0},       {"quiet", 'q'},      {"debug", 'd'},
    {"rejoin", 0},      {"ignore-joins", 0}, {"gpg-sign", 'S', O}};

// Subcommands git runs with other options zpolicy does not list: only the options that
// run a program or name a template are known, and a word is taken for one of them
// whenever git could take it so (any prefix, any letter of a cluster). archive parses
// `--remote`, `--exec` and `--output` first and keeps the rest (PARSE_OPT_KEEP_UNKNOWN).
constexpr Option kArchive[] = {{"remote", 0, V, Repo}, {"exec", 0, V, Cmd}, {"output", 'o', V}};
constexpr Option kDifftool[] = {{"extcmd", 'x', V, Cmd}};
constexpr Option kRebase[] = {{"exec", 'x', V, Cmd}};
constexpr Option kGrep[] = {{"open-files-in-pager", 'O', O, Cmd}};
constexpr Option kInit[] = {{"template", 0, V, Dir}};
constexpr Option kSendEmail[] = {{"smtp-server", 0, V, Cmd}, {"to-cmd", 0, V, Cmd},
                                 {"cc-cmd", 0, V, Cmd}, {"header-cmd", 0, V, Cmd},
                                 {"sendmail-cmd", 0, V, Cmd}};
constexpr Option kFilterBranch[] = {
    {"setup", 0, V, Cmd},         {"env-filter", 0, V, Cmd},    {"tree-filter", 0, V, Cmd},
    {"index-filter", 0, V, Cmd},  {"parent-filter", 0, V, Cmd}, {"msg-filter", 0, V, Cmd},
    {"commit-filter", 0, V, Cmd}, {"tag-name-filter", 0, V, Cmd}};
constexpr Option kInstaweb[] = {{"httpd", 'd', V, Cmd}, {"browser", 'b', V, Cmd}};
constexpr Option kWebBrowse[] = {{"browser", 'b', V, Cmd}, {"cmd", 'c', V, Cmd}};

constexpr Table kTables[] = {
    {"push", kPush, true, Operands::First},
    {"fetch", kFetch, true, Operands::First},
    {"pull", kPull, true, Operands::First},
    {"ls-remote", kLsRemote, true, Operands::First},
    {"clone", kClone, true, Operands::First},
    {"send-pack", kSendPack, true, Operands::First},
    {"receive-pack", kReceivePack, true, Operands::First},
    {"subtree", kSubtree, true, Operands::None},
    {"archive", kArchive, false, Operands::None},
    {"difftool", kDifftool, false, Operands::None},
    {"rebase", kRebase, false, Operands::None},
    {"grep", kGrep, false, Operands::None},
    {"init", kInit, false, Operands::None},
    {"send-email", kSendEmail, false, Operands::None},
    {"filter-branch", kFilterBranch, false, Operands::None},
    {"instaweb", kInstaweb, false, Operands::None},
    {"web--browse", kWebBrowse, false, Operands::None},
};

}  // namespace

constexpr Table kSubmoduleAddTable{"submodule add", kSubmoduleAdd, true, Operands::First};
constexpr Table kRemoteAddTable{"remote add", kRemoteAdd, true, Operands::None};
constexpr Table kRemoteSetUrlTable{"remote set-url", kRemoteSetUrl, true, Operands::None};
constexpr Table kRemoteOtherTable{"remote", kRemoteOther, true, Operands::None};

const Table* table_of(std::string_view sub) {
  for (const Table& t : kTables)
    if (t.subcommand == sub) return &t;
  return nullptr;
}

namespace {

// The options named by `--name` (without its `=value`) as git's parse_long_opt finds them:
// an exact name wins (`--no-NAME` and, for an option named `no-X`, `--X` are negations);
// else every option the word abbreviates, negated or not. Each with whether it is negated.
std::vector<std::pair<const Option*, bool>> long_candidates(std::span<const Option> opts,
                                                            std::string_view name) {
  auto starts = [](std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; };
  const bool no = starts(name, "no-");
  for (const Option& o : opts) {
    if (o.name.empty()) continue;
    if (o.name == name) return {{&o, false}};
    if (no && o.name == name.substr(3)) return {{&o, true}};
    if (starts(o.name, "no-") && o.name.substr(3) == name) return {{&o, true}};
  }
  std::vector<std::pair<const Option*, bool>> out;
  for (const Option& o : opts) {
    if (o.name.empty()) continue;
    if (starts(o.name, name))
      out.push_back({&o, false});
    else if ((no && starts(o.name, name.substr(3))) || starts("no-", name) ||
             (starts(o.name, "no-") && starts(o.name.substr(3), name)))
      out.push_back({&o, true});
  }
  return out;
}

}  // namespace

Parsed match_options(const Table& t, const std::vector<std::string>& w, size_t from) {
  Parsed p;
  auto value_of = [&](const Option& o, size_t& i, std::optional<std::string> glued,
                      std::string as_written) {
    Matched m{&o, std::nullopt, i, std::move(as_written)};
    if (glued) {
      m.value = std::move(glued);
    } else if (o.takes == Takes::Value) {
      if (i + 1 >= w.size()) return;  // git refuses a missing value
      m.value = w[++i];
      m.word = i;
    }
    p.options.push_back(std::move(m));
  };
  for (size_t i = from; i < w.size(); ++i) {
    const std::string& a = w[i];
    if (a == "--" || a == "--end-of-options") {
      for (size_t k = i + 1; k < w.size(); ++k) p.operands.push_back({w[k], k});
      return p;
    }
    if (a.size() < 2 || a[0] != '-') {
      p.operands.push_back({a, i});
      continue;
    }
    if (a[1] == '-') {
      const size_t eq = a.find('=');
      const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const auto found = long_candidates(t.options, name);
      if (t.complete && found.empty()) {
        p.unreadable = "its option '" + a.substr(0, eq) + "' is not one zpolicy knows for `git " +
                       std::string(t.subcommand) + "`, so it cannot tell which word is the repository";
        return p;
      }
      if (t.complete && found.size() > 1) {
        p.unreadable = "its option '" + a.substr(0, eq) + "' abbreviates more than one of `git " +
                       std::string(t.subcommand) + "`'s";
        return p;
      }
      const size_t at = i;
      for (const auto& [o, negated] : found) {
        size_t k = at;
        std::optional<std::string> glued;
        if (eq != std::string::npos) glued = a.substr(eq + 1);
        if (negated || o->takes == Takes::Nothing)
          p.options.push_back({o, std::nullopt, k, "--" + std::string(o->name)});
        else
          value_of(*o, k, glued, "--" + std::string(o->name));
        i = std::max(i, k);
      }
      continue;
    }
    for (size_t c = 1; c < a.size(); ++c) {
      const Option* o = nullptr;
      for (const Option& x : t.options)
        if (x.letter == a[c]) o = &x;
      if (!o) {
        if (!t.complete) continue;
        p.unreadable = "its option '-" + std::string(1, a[c]) + "' (in '" + a +
                       "') is not one zpolicy knows for `git " + std::string(t.subcommand) + "`";
        return p;
      }
      if (o->takes == Takes::Nothing) {
        p.options.push_back({o, std::nullopt, i, std::string("-") + a[c]});
        continue;
      }
      std::optional<std::string> rest;
      if (c + 1 < a.size()) rest = a.substr(c + 1);
      if (o->takes == Takes::Optional && !rest)
        p.options.push_back({o, std::nullopt, i, std::string("-") + a[c]});
      else
        value_of(*o, i, rest, std::string("-") + a[c]);
      break;
    }
  }
  return p;
}


}  // namespace zpolicy::compiler::git_options
