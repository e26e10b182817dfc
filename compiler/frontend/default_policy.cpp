#include "compiler/frontend/default_policy.hpp"

#include <string_view>
#include <vector>

#include "compiler/frontend/policy_parser.hpp"
#include "ir/path_pattern.hpp"

namespace zpolicy::compiler {
namespace {

// Writes policy text and tells where each value lands, as the frontend's locations
// count: 1-based lines and byte columns.
class TextWriter {
 public:
  void put(std::string_view s) {
    for (char c : s) {
      text_ += c;
      if (c == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
    }
  }
  ir::SourceLoc here() const { return {kDefaultPolicyFile, line_, col_}; }
  // Writes a flow list, `[a, b]`, and returns where each item starts.
  std::vector<ir::SourceLoc> list(const std::vector<std::string>& items, bool quoted) {
    std::vector<ir::SourceLoc> at;
    put("[");
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) put(", ");
      at.push_back(here());
      // A plain scalar starting with '*' would be a YAML alias.
      put(quoted || items[i].starts_with('*') ? "\"" + items[i] + "\"" : items[i]);
    }
    put("]");
    return at;
  }
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
  int line_ = 1, col_ = 1;
};

ir::PolicyPath path(const std::string& text, bool relative) {
  return *ir::parse_policy_path(text, relative, nullptr);
}

// A default protected entry, a path or a pattern, as the frontend files it.
void add_protected(ir::Policy& p, const std::string& text, const ir::SourceLoc& at) {
  if (ir::looks_like_pattern(text))
    p.protect_patterns.push_back({*ir::parse_path_pattern(text, true, nullptr), at});
  else
    p.protect.push_back({path(text, true), at});
}

struct DefaultPolicy {
  std::string text;
  ir::Policy policy;
};

// The text and, built beside it, the IR the frontend makes of that text. `zpolicy run`
// without --policy takes the IR and so skips the YAML parser, about a third of the run's
// instructions; tests/unit/frontend_default_policy.cpp checks, for every mode, that
// parsing the text gives exactly this IR.
DefaultPolicy build(ir::Mode mode) {
  TextWriter w;
  ir::Policy p;
  const ir::SourceLoc builtin{ir::kBuiltinFile};
  p.origin = {kDefaultPolicyFile, 0, 0};
  w.put("# zpolicy built-in default policy (language version 1).\n");
  w.put("zpolicy: 1\n");
  w.put("mode: ");
  p.mode = {mode, w.here()};
  w.put(std::string(ir::to_string(mode)) + "\n");
  w.put("filesystem:\n");
  w.put("  read: ");
  p.read.push_back({path("/", false), w.list({"/"}, true)[0]});
  w.put("\n");
  const auto& subs = default_protected_subpaths();
  if (mode != ir::Mode::ReadOnly) {
    w.put("  write: ");
    p.write.push_back({path("${WORKSPACE}", false), w.list({"${WORKSPACE}"}, true)[0]});
    w.put("\n");
    w.put("  # Stay read-only inside every writable root, whether they exist or not.\n");
    w.put("  protect: ");
    const auto at = w.list(subs, false);
    for (size_t i = 0; i < subs.size(); ++i) add_protected(p, subs[i], at[i]);
    w.put("\n");
  } else {
    // Without a `protect` key the frontend supplies the same list as built-in rules.
    for (const auto& s : subs) add_protected(p, s, builtin);
  }
  w.put("  deny: []\n");
  w.put("network: ");
  p.network = {ir::Network::None, w.here()};
  w.put("none\n");
  w.put("syscalls:\n");
  w.put("  # Added to the mode's baseline deny set (see docs/seccomp.md).\n");
  w.put("  deny: ");
  const std::vector<std::string> denied = {"ptrace", "process_vm_readv", "process_vm_writev"};
  const auto denied_at = w.list(denied, false);
  w.put("\n");
  w.put("  action: ");
  p.syscalls.style = ir::SyscallSpec::Style::DenyList;
  p.syscalls.action = {ir::Action::errno_(1), w.here()};
  w.put("errno\n");
  for (size_t i = 0; i < denied.size(); ++i)
    p.syscalls.rules.push_back({denied[i], p.syscalls.action.value, {}, denied_at[i]});
  w.put("process:\n");
  w.put("  env:\n");
  w.put("    keep: ");
  const auto& keep = ir::default_env_keep();
  const auto keep_at = w.list(keep, false);
  for (size_t i = 0; i < keep.size(); ++i) p.env.keep.push_back({keep[i], keep_at[i]});
  w.put("\n");
  w.put("    set: {}\n");
  w.put("unavailable: ");
  p.unavailable = {ir::Unavailable::Deny, w.here()};
  w.put("deny\n");
  return {w.take(), std::move(p)};
}

}  // namespace

std::string default_policy_text(ir::Mode mode) { return build(mode).text; }

ir::Policy default_policy(ir::Mode mode) { return build(mode).policy; }

}  // namespace zpolicy::compiler
