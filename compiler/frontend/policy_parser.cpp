#include "compiler/frontend/policy_parser.hpp"
#include "ir/duration.hpp"

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>

#include "compiler/frontend/yaml_tree.hpp"
#include "ir/path_pattern.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::compiler {
namespace {

using ir::Located;
using ir::SourceLoc;
using Kind = YamlNode::Kind;

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& choices) {
  std::string best;
  size_t best_d = 3;
  for (const auto& c : choices) {
    // The distance is at least the difference in length: a word far longer than every
    // choice (a pasted path, a 1 MiB name) costs no quadratic comparison.
    if ((word.size() > c.size() ? word.size() - c.size() : c.size() - word.size()) >= best_d)
      continue;
    size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

const std::vector<std::string>& syscall_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& s : ir::syscall_table(ir::Arch::X86_64)) v.emplace_back(s.name);
    return v;
  }();
  return names;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Null:
      return "nothing";
    case Kind::Scalar:
      return "a scalar";
    case Kind::Sequence:
      return "a list";
    case Kind::Map:
      return "a mapping";
  }
  return "?";
}

class Frontend {
 public:
  Frontend(std::string file, ir::Diagnostics& diags) : file_(std::move(file)), diags_(diags) {}

  std::optional<ir::Policy> run(const YamlNode& root) {
    ir::Policy p;
    p.origin = {file_, 0, 0};
    // Defaults are rules too: a later diagnostic about them names the built-in layer.
    const SourceLoc builtin{ir::kBuiltinFile};
    p.network.loc = builtin;
    p.syscalls.action.loc = builtin;
    p.unavailable.loc = builtin;
    if (!expect(root, Kind::Map, "the policy")) return std::nullopt;
    auto keys = map_keys(root, {"zpolicy", "mode", "filesystem", "network", "syscalls",
                                "process", "unavailable"});
    if (!keys.count("zpolicy")) {
      error(root, "missing required key 'zpolicy' (the schema version; write 'zpolicy: 1')");
    } else {
      version(*keys["zpolicy"]);
    }
    if (!keys.count("mode")) {
      error(root, "missing required key 'mode' (read-only, workspace-write or danger-full-access)");
    } else if (auto m = enum_value(*keys["mode"], "mode", ir::parse_mode,
                                   {"read-only", "workspace-write", "danger-full-access"})) {
      p.mode = ir::Located<ir::Mode>{*m, loc(*keys["mode"])};
    }
    filesystem(keys.count("filesystem") ? keys["filesystem"] : nullptr, p);
    if (keys.count("network")) network(*keys["network"], p);
    if (keys.count("syscalls")) syscalls(*keys["syscalls"], p.syscalls);
    if (keys.count("process")) process(*keys["process"], p);
    else
      for (const auto& k : ir::default_env_keep()) p.env.keep.push_back({k, {ir::kBuiltinFile}});
    if (keys.count("unavailable"))
      if (auto u = enum_value(*keys["unavailable"], "unavailable", ir::parse_unavailable,
                              {"deny", "run-unconfined"})) {
        p.unavailable = ir::Located<ir::Unavailable>{*u, loc(*keys["unavailable"])};
        if (*u == ir::Unavailable::RunUnconfined && p.mode.value != ir::Mode::WorkspaceWrite)
          error(*keys["unavailable"],
                "'unavailable: run-unconfined' is only allowed with mode workspace-write");
      }
    if (diags_.has_errors()) return std::nullopt;
    return p;
  }

 private:
  SourceLoc loc(const YamlNode& n) const { return {file_, n.line, n.col}; }
  void error(const YamlNode& n, std::string msg) { diags_.error(loc(n), std::move(msg)); }

  bool expect(const YamlNode& n, Kind k, const std::string& what) {
    if (n.kind == k) return true;
    error(n, what + " must be " + kind_name(k) + ", not " + kind_name(n.kind));
    return false;
  }

  // The keys of a mapping node, checked against the allowed set: unknown keys, non-scalar
  // keys and duplicates are errors (a silently ignored key is a silently dropped rule).
  std::map<std::string, const YamlNode*> map_keys(const YamlNode& map,
                                                  const std::vector<std::string>& allowed) {
    std::map<std::string, const YamlNode*> out;
    std::map<std::string, const YamlNode*> key_nodes;
    for (const auto& [k, v] : map.entries) {
      if (k.kind != Kind::Scalar) {
        error(k, "keys must be plain names");
        continue;
      }
      if (std::find(allowed.begin(), allowed.end(), k.value) == allowed.end()) {
        error(k, "unknown key '" + k.value + "'" + did_you_mean(k.value, allowed));
        continue;
      }
      if (key_nodes.count(k.value)) {
        const YamlNode& first = *key_nodes[k.value];
        error(k, "duplicate key '" + k.value + "' (first set at line " +
                     std::to_string(first.line) + ")");
        continue;
      }
      key_nodes[k.value] = &k;
      out[k.value] = &v;
    }
    return out;
  }

  template <class F>
  std::invoke_result_t<F, std::string_view> enum_value(const YamlNode& n, const std::string& key, F parse,
                              const std::vector<std::string>& choices) {
    if (!expect(n, Kind::Scalar, "'" + key + "'")) return std::nullopt;
    if (auto v = parse(n.value)) return v;
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
    error(n, "invalid " + key + " '" + n.value + "' (expected one of: " + list + ")" +
                 did_you_mean(n.value, choices));
    return std::nullopt;
  }

  void version(const YamlNode& n) {
    if (!expect(n, Kind::Scalar, "'zpolicy'")) return;
    if (n.quoted || n.value != "1") {
      int v = 0;
      auto [ptr, ec] = std::from_chars(n.value.data(), n.value.data() + n.value.size(), v);
      if (!n.quoted && ec == std::errc() && ptr == n.value.data() + n.value.size())
        error(n, "unsupported schema version " + n.value + " (this zpolicy reads version 1)");
      else
        error(n, "'zpolicy' must be the schema version number 1, not '" + n.value + "'");
    }
  }

  std::vector<Located<std::string>> string_list(const YamlNode& n, const std::string& what) {
    std::vector<Located<std::string>> out;
    if (!expect(n, Kind::Sequence, "'" + what + "'")) return out;
    for (const auto& item : n.items) {
      if (item.kind != Kind::Scalar) {
        error(item, "each entry of '" + what + "' must be a string, not " + kind_name(item.kind));
        continue;
      }
      out.push_back({item.value, loc(item)});
    }
    return out;
  }

  // A list of paths; where `patterns` is given (protect, deny), entries with '*' go there
  // as typed patterns. Elsewhere a '*', '?' or '[' is an error: a glob taken literally
  // would be a rule that silently names nothing.
  std::vector<Located<ir::PolicyPath>> paths(const YamlNode& n, const std::string& what,
                                              bool allow_relative,
                                              std::vector<Located<ir::PathPattern>>* patterns = nullptr) {
    std::vector<Located<ir::PolicyPath>> out;
    std::set<ir::PolicyPath> seen;
    std::set<ir::PathPattern> seen_patterns;
    for (auto& [text, where] : string_list(n, what)) {
      ir::PathError why;
      if (ir::looks_like_pattern(text)) {
        if (!patterns) {
          diags_.error(where, "in '" + what + "': '" + text +
                                  "' is a pattern; patterns are allowed only in 'protect' and 'deny'");
          continue;
        }
        auto pat = ir::parse_path_pattern(text, allow_relative, &why);
        if (!pat) {
          diags_.error(where, "in '" + what + "': " + why.reason);
        } else if (!seen_patterns.insert(*pat).second) {
          diags_.error(where, "'" + pat->str() + "' is listed twice in '" + what + "'");
        } else {
          patterns->push_back({std::move(*pat), where});
        }
        continue;
      }
      auto p = ir::parse_policy_path(text, allow_relative, &why);
      if (!p) {
        diags_.error(where, "in '" + what + "': " + why.reason);
        continue;
      }
      if (!seen.insert(*p).second) {
        diags_.error(where, "'" + p->str() + "' is listed twice in '" + what + "'");
        continue;
      }
      out.push_back({*p, where});
    }
    return out;
  }

  void filesystem(const YamlNode* fs, ir::Policy& p) {
    std::map<std::string, const YamlNode*> keys;
    if (fs && expect(*fs, Kind::Map, "'filesystem'"))
      keys = map_keys(*fs, {"read", "write", "protect", "deny"});
    SourceLoc builtin{ir::kBuiltinFile};
    if (keys.count("read")) {
      p.read = paths(*keys["read"], "read", false);
    } else {
      p.read.push_back({ir::PolicyPath{ir::PathRoot::Absolute, {}}, builtin});
    }
    if (keys.count("write")) {
      p.write = paths(*keys["write"], "write", false);
      if (!p.write.empty() && p.mode.value == ir::Mode::ReadOnly)
        error(*keys["write"], "writable roots need mode workspace-write; this policy is read-only");
    } else if (p.mode.value != ir::Mode::ReadOnly) {
      p.write.push_back({ir::PolicyPath{ir::PathRoot::Workspace, {}}, builtin});
    }
    if (keys.count("protect")) {
      p.protect = paths(*keys["protect"], "protect", true, &p.protect_patterns);
      p.protect_loc = loc(*keys["protect"]);
    } else {
      p.protect_loc = builtin;
      for (const auto& s : default_protected_subpaths()) {
        if (ir::looks_like_pattern(s))
          p.protect_patterns.push_back({*ir::parse_path_pattern(s, true, nullptr), builtin});
        else
          p.protect.push_back({*ir::parse_policy_path(s, true, nullptr), builtin});
      }
    }
    if (keys.count("deny")) p.deny = paths(*keys["deny"], "deny", false, &p.deny_patterns);
  }

  // `none | loopback | full`, or a mapping `{allow: [ENTRY, ...]}` (docs/network.md).
  void network(const YamlNode& n, ir::Policy& p) {
    if (n.kind != Kind::Map) {
      if (auto v = enum_value(n, "network", ir::parse_network, {"none", "loopback", "full"}))
        p.network = ir::Located<ir::Network>{*v, loc(n)};
      return;
    }
    auto keys = map_keys(n, {"allow"});
    if (!keys.count("allow")) {
      if (n.entries.empty() || !diags_.has_errors())
        error(n, "a network mapping needs 'allow: [DESTINATION, ...]'");
      return;
    }
    const YamlNode& list = *keys["allow"];
    std::vector<Located<ir::Destination>> allow;
    for (auto& [text, where] : string_list(list, "allow")) {
      ir::DestinationError why;
      auto parsed = ir::parse_destination(text, &why);
      if (!parsed) {
        diags_.error(where, "in 'allow': " + why.reason);
        continue;
      }
      for (auto& d : *parsed) allow.push_back({std::move(d), where});
    }
    if (list.kind == Kind::Sequence && list.items.empty())
      error(list, "an empty allow list admits nothing; write 'network: none'");
    // Sorted and each destination once, the first entry naming it keeping its line:
    // `pypi.org` and `pypi.org:443` overlap by design and say the same thing.
    std::stable_sort(allow.begin(), allow.end(),
                     [](const auto& a, const auto& b) { return a.value < b.value; });
    allow.erase(std::unique(allow.begin(), allow.end(),
                            [](const auto& a, const auto& b) { return a.value == b.value; }),
                allow.end());
    p.network = ir::Located<ir::Network>{ir::Network::Allow, loc(n)};
    p.allow = std::move(allow);
  }

  std::optional<ir::Action> action(const YamlNode& n, const std::string& key) {
    if (!expect(n, Kind::Scalar, "'" + key + "'")) return std::nullopt;
    if (n.value == "errno") return ir::Action::errno_(1);
    if (n.value == "kill") return ir::Action::kill();
    error(n, "invalid " + key + " '" + n.value + "' (expected errno or kill)" +
                 did_you_mean(n.value, {"errno", "kill"}));
    return std::nullopt;
  }

  void syscalls(const YamlNode& n, ir::SyscallSpec& spec) {
    if (!expect(n, Kind::Map, "'syscalls'")) return;
    auto keys = map_keys(n, {"deny", "action", "allow", "default"});
    bool allow_list = keys.count("allow") || keys.count("default");
    if (allow_list && (keys.count("deny") || keys.count("action"))) {
      error(n, "'syscalls' is either a deny-list (deny, action) or an allow-list (default, allow), "
               "not both");
      return;
    }
    if (allow_list && !(keys.count("allow") && keys.count("default"))) {
      error(n, "an allow-list needs both 'default' and 'allow'");
      return;
    }
    spec.style = allow_list ? ir::SyscallSpec::Style::AllowList : ir::SyscallSpec::Style::DenyList;
    const char* action_key = allow_list ? "default" : "action";
    if (keys.count(action_key))
      if (auto a = action(*keys[action_key], action_key))
        spec.action = {*a, loc(*keys[action_key])};
    const YamlNode* list = keys.count(allow_list ? "allow" : "deny")
                               ? keys[allow_list ? "allow" : "deny"] : nullptr;
    if (!list) return;
    std::set<std::string> seen;
    for (auto& [name, where] : string_list(*list, allow_list ? "allow" : "deny")) {
      if (!ir::find_syscall(ir::Arch::X86_64, name)) {
        diags_.error(where, "unknown syscall '" + name + "'" + did_you_mean(name, syscall_names()));
        continue;
      }
      if (!seen.insert(name).second) {
        diags_.error(where, "syscall '" + name + "' is listed twice");
        continue;
      }
      spec.rules.push_back({name, allow_list ? ir::Action::allow() : spec.action.value, {}, where});
    }
  }

  std::optional<std::chrono::milliseconds> duration(const YamlNode& n) {
    if (!expect(n, Kind::Scalar, "'timeout'")) return std::nullopt;
    const std::string& s = n.value;
    auto d = ir::parse_duration(s);
    if (auto* ms = std::get_if<std::chrono::milliseconds>(&d)) return *ms;
    if (std::get<ir::DurationError>(d) == ir::DurationError::Malformed)
      error(n, "malformed duration '" + s + "' (expected e.g. 500ms, 120s, 10m, 2h)");
    else
      error(n, "timeout '" + s + "' is out of range (more than 0, at most 7 days)");
    return std::nullopt;
  }

  static bool env_name_ok(std::string_view s, bool allow_glob) {
    if (allow_glob && s.size() > 1 && s.back() == '*') s.remove_suffix(1);
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
  }

  void process(const YamlNode& n, ir::Policy& p) {
    if (!expect(n, Kind::Map, "'process'")) return;
    auto keys = map_keys(n, {"env", "timeout"});
    if (keys.count("timeout"))
      if (auto d = duration(*keys["timeout"])) p.timeout = Located<std::chrono::milliseconds>{*d, loc(*keys["timeout"])};
    if (!keys.count("env")) {
      for (const auto& k : ir::default_env_keep()) p.env.keep.push_back({k, {ir::kBuiltinFile}});
      return;
    }
    const YamlNode& env = *keys["env"];
    if (!expect(env, Kind::Map, "'env'")) return;
    auto ek = map_keys(env, {"keep", "set"});
    if (ek.count("keep")) {
      for (auto& item : string_list(*ek["keep"], "keep")) {
        if (!env_name_ok(item.value, true))
          diags_.error(item.loc, "invalid environment variable name '" + item.value + "'");
        else
          p.env.keep.push_back(item);
      }
    } else {
      for (const auto& k : ir::default_env_keep()) p.env.keep.push_back({k, {ir::kBuiltinFile}});
    }
    if (ek.count("set") && expect(*ek["set"], Kind::Map, "'set'")) {
      for (const auto& [k, v] : ek["set"]->entries) {
        if (k.kind != Kind::Scalar || !env_name_ok(k.value, false)) {
          error(k, "invalid environment variable name '" + k.value + "'");
          continue;
        }
        if (p.env.set.count(k.value)) {
          error(k, "duplicate key '" + k.value + "' (first set at line " +
                       std::to_string(p.env.set[k.value].loc.line) + ")");
          continue;
        }
        if (v.kind != Kind::Scalar) {
          error(v, "the value of '" + k.value + "' must be a string, not " + kind_name(v.kind));
          continue;
        }
        p.env.set[k.value] = {v.value, loc(k)};
      }
    }
  }

  std::string file_;
  ir::Diagnostics& diags_;
};

}  // namespace

const std::vector<std::string>& default_protected_subpaths() {
  // `.git` stays protected at the top even where it does not exist yet (a placeholder);
  // `**/.git` adds every repository that exists below it: nested ones, submodules,
  // worktrees (docs/patterns.md). Mercurial, Sapling and Jujutsu read hooks, extensions
  // and pagers from their metadata as git does, so every existing one is protected too
  // (red team A12-5, docs/decisions.md).
  static const std::vector<std::string> v = {
      ".git", "**/.git",    "**/.hg",       "**/.sl", "**/.jj",
      ".env", ".env.local", "node_modules", ".next",  "data/agent-sessions"};
  return v;
}

std::optional<ir::Policy> parse_policy(std::string_view text, const std::string& file,
                                       ir::Diagnostics& diags) {
  auto root = parse_yaml(text, file, diags);
  if (!root) return std::nullopt;
  return Frontend(file, diags).run(*root);
}

std::optional<ir::Policy> load_policy_file(const std::string& path, ir::Diagnostics& diags) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diags.error({path, 0, 0}, std::string("cannot read policy file: ") + std::strerror(errno));
    return std::nullopt;
  }
  // Read at most one byte past the limit so that an oversized file is refused without
  // being held whole in memory. Chunks, not one limit-sized buffer: zeroing a whole MiB
  // for a policy of a few hundred bytes cost `zpolicy run` about 250 page faults.
  constexpr size_t kLimit = YamlLimits{}.max_bytes;
  std::string text;
  char chunk[16384];
  while (text.size() <= kLimit) {
    const size_t want = std::min(sizeof chunk, kLimit + 1 - text.size());
    in.read(chunk, static_cast<std::streamsize>(want));
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (!in) break;
  }
  if (in.bad()) {  // e.g. a directory: it opens, but reading it fails
    diags.error({path, 0, 0}, std::string("cannot read policy file: ") + std::strerror(errno));
    return std::nullopt;
  }
  return parse_policy(text, path, diags);
}

}  // namespace zpolicy::compiler
