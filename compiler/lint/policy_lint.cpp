#include "compiler/lint/policy_lint.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <tuple>

namespace zpolicy::compiler {
namespace {

using ir::PathRoot;
using ir::PolicyPath;

bool root_is_filesystem_root(const PolicyPath& p) {
  return p.root == PathRoot::Absolute && p.components.empty();
}

// Whether `a` contains `b`, also across anchors when both can be bound to the host.
std::optional<std::string> bind(const PolicyPath& p, const std::optional<HostFacts>& host) {
  if (p.root == PathRoot::Absolute) return p.str();
  if (!host) return std::nullopt;
  std::string base = p.root == PathRoot::Workspace ? host->workspace
                     : p.root == PathRoot::Home    ? host->home
                     : p.root == PathRoot::Tmpdir  ? host->tmpdir
                                                   : "";
  if (base.empty()) return std::nullopt;
  for (const auto& c : p.components) base += "/" + c;
  return base;
}

bool contains(const PolicyPath& a, const PolicyPath& b, const std::optional<HostFacts>& host) {
  if (root_is_filesystem_root(a)) return !b.is_relative();
  if (a.contains(b)) return true;
  auto ba = bind(a, host), bb = bind(b, host);
  return ba && bb && ir::path_within(*ba, *bb);
}

// Paths a writable root must not hold: what the shell runs at start-up, and keys.
const std::vector<std::string>& home_startup_files() {
  static const std::vector<std::string> v = {".bashrc", ".bash_profile", ".profile", ".zshrc",
                                             ".zprofile", ".bash_login", ".config/fish"};
  return v;
}

// Directories whose files the host runs or trusts as root: a writable root over or under
// one of them lets a sandboxed command plant code that runs outside the sandbox.
const std::vector<std::string>& system_directories() {
  static const std::vector<std::string> v = {"/bin", "/boot", "/etc", "/lib", "/lib32",
                                             "/lib64", "/libx32", "/sbin", "/usr"};
  return v;
}

// Environment names that usually carry a credential (case-insensitive): kept into the
// sandbox, they are readable by everything it runs.
bool looks_like_secret(std::string name) {
  for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name.ends_with("*")) name.pop_back();
  for (const char* part : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY",
                           "PRIVATE_KEY", "ACCESS_KEY"})
    if (name.find(part) != std::string::npos) return true;
  return name.ends_with("_KEY") || name.starts_with("AWS_") || name == "AWS" ||
         name.starts_with("GITHUB_TOKEN") || name.starts_with("NPM_TOKEN");
}

}  // namespace

std::string Lint::str() const {
  return loc.str() + ": " + ir::to_string(severity) + ": " + message + " [" + id + "]";
}

std::vector<Lint> lint_policy(const ir::Policy& p, const LintContext& ctx) {
  std::vector<Lint> out;
  auto add = [&](const char* id, ir::Severity sev, const ir::SourceLoc& loc, std::string msg) {
    out.push_back({id, sev, loc, std::move(msg)});
  };
  using S = ir::Severity;
  bool writes = p.mode.value != ir::Mode::ReadOnly;

  for (const auto& pr : p.protect) {
    if (pr.value.is_relative()) continue;
    bool covered = false;
    for (const auto& w : p.write) covered |= contains(w.value, pr.value, ctx.host);
    if (!covered)
      add("ZP001", S::Warning, pr.loc,
          "protected path '" + pr.value.str() + "' is under no writable root; it is read-only anyway");
  }
  for (size_t i = 0; i < p.write.size(); ++i)
    for (size_t j = 0; j < p.write.size(); ++j)
      if (i != j && contains(p.write[i].value, p.write[j].value, ctx.host))
        add("ZP002", S::Warning, p.write[j].loc,
            "writable root '" + p.write[j].value.str() + "' is nested in writable root '" +
                p.write[i].value.str() + "' (line " + std::to_string(p.write[i].loc.line) + ")");
  if (writes) {
    PolicyPath home{PathRoot::Home, {}};
    for (const auto& w : p.write) {
      if (contains(w.value, home, ctx.host)) {
        add("ZP003", S::Error, w.loc,
            "writable root '" + w.value.str() +
                "' holds the home directory: shell start-up files (~/.bashrc, ~/.profile) "
                "and ~/.ssh become writable, which outlives the sandbox");
        continue;
      }
      for (const auto& f : home_startup_files()) {
        PolicyPath startup = home.join(*ir::parse_policy_path(f, true, nullptr));
        if (contains(w.value, startup, ctx.host))
          add("ZP003", S::Error, w.loc,
              "writable root '" + w.value.str() + "' holds shell start-up file '~/" + f + "'");
      }
      if (auto bw = bind(w.value, ctx.host)) {
        if (ctx.policy_file && ir::path_within(*bw, *ctx.policy_file))
          add("ZP004", S::Error, w.loc,
              "writable root '" + w.value.str() + "' holds the policy file itself ('" +
                  *ctx.policy_file + "'): the sandbox could rewrite its own policy");
        if (ctx.zpolicy_binary && ir::path_within(*bw, *ctx.zpolicy_binary))
          add("ZP005", S::Error, w.loc,
              "writable root '" + w.value.str() + "' holds the zpolicy binary ('" +
                  *ctx.zpolicy_binary + "')");
        char real[PATH_MAX];
        struct stat st;
        if (ctx.host && lstat(bw->c_str(), &st) == 0 && S_ISLNK(st.st_mode) &&
            realpath(bw->c_str(), real) && !ir::path_within(*bw, real))
          add("ZP006", S::Warning, w.loc,
              "writable root '" + w.value.str() + "' is a symlink out of itself (to '" +
                  std::string(real) + "'); the target is what becomes writable");
      }
    }
  }
  if (p.network.value == ir::Network::Full && p.deny.size() >= 3)
    add("ZP007", S::Warning, p.network.loc,
        "network: full in a policy with " + std::to_string(p.deny.size()) +
            " deny roots: secrets kept from the filesystem can still leave through the network");
  for (const auto& d : p.deny)
    for (const auto& w : p.write)
      for (const auto& pr : p.protect) {
        PolicyPath prot = pr.value.is_relative() ? w.value.join(pr.value) : pr.value;
        if (prot.contains(d.value) && !(prot == d.value))
          add("ZP008", S::Warning, d.loc,
              "deny root '" + d.value.str() + "' lies inside protected path '" + prot.str() +
                  "'; it is denied, and the protection above it is read-only");
      }
  for (const auto& d : p.deny)
    if (root_is_filesystem_root(d.value))
      add("ZP009", S::Error, d.loc, "deny root '/' denies everything, including the command itself");
  if (writes && p.protect.empty() && !p.write.empty())
    add("ZP011", S::Warning, p.write.front().loc,
        "no protected subpaths (protect: []): .git, .env and the rest of each writable root "
        "become writable, and git hooks planted there run outside the sandbox");
  for (const auto& k : p.env.keep)
    if (looks_like_secret(k.value))
      add("ZP012", S::Warning, k.loc,
          "keep '" + k.value + "' looks like a secret: everything the sandbox runs can read it");
  if (writes)
    for (const auto& w : p.write) {
      if (w.value.root != PathRoot::Absolute) continue;
      const std::string root = w.value.str();
      for (const auto& sys : system_directories())
        if (ir::path_within(root, sys) || ir::path_within(sys, root)) {
          add("ZP013", S::Error, w.loc,
              "writable root '" + root + "' " +
                  (ir::path_within(sys, root) ? "lies in" : "holds") + " system directory '" + sys +
                  "': programs and configuration the host runs become writable");
          break;
        }
    }
  if (p.mode.value == ir::Mode::DangerFullAccess)
    add("ZP010", S::Warning, p.mode.loc,
        "mode danger-full-access runs commands without any sandbox");
  std::sort(out.begin(), out.end(), [](const Lint& a, const Lint& b) {
    return std::tie(a.loc.file, a.loc.line, a.loc.col, a.id, a.message) <
           std::tie(b.loc.file, b.loc.line, b.loc.col, b.id, b.message);
  });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Lint& a, const Lint& b) { return a.str() == b.str(); }),
            out.end());
  return out;
}

}  // namespace zpolicy::compiler
