// Random edits of the golden SBPL profiles, checked by verify_sbpl against a reference
// written here: every profile the verifier accepts grants nothing the policy denies,
// according to a deliberately simple evaluator run over every path the profile or the
// policy names, with its parent, a child and siblings, under every precedence model.
//
// The reference shares no code with compiler/analyzer/sbpl: it walks the S-expressions
// itself (recursion is fine here: the profiles are generated, at most a few levels deep,
// and the verifier's reader refuses anything deeper than 16), and its idea of what the
// policy denies is the plain reading of docs/macos.md, not the verifier's intent.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"
#include "compiler/analyzer/sbpl/sbpl_verify.hpp"
#include "golden_support.hpp"

using namespace zpolicy;
using compiler::Sexpr;

namespace {

// --- The reference evaluator ----------------------------------------------------------

using Params = std::map<std::string, std::string>;

bool within(const std::string& root, const std::string& path) {
  if (root == "/") return path.starts_with('/') || path.starts_with("${");
  return path == root || path.starts_with(root + "/");
}

// A path filter's value, or none when it is not one.
std::optional<std::string> path_value(const Sexpr& f, const Params& params) {
  if (f.items.size() != 2) return std::nullopt;
  const Sexpr& arg = f.items[1];
  if (arg.kind == Sexpr::Kind::String) return std::string(arg.atom);
  if (arg.kind == Sexpr::Kind::List && arg.items.size() == 2 && arg.items[0].atom == "param") {
    auto it = params.find(std::string(arg.items[1].atom));
    if (it != params.end()) return it->second;
  }
  return std::nullopt;
}

struct Target {
  std::string text;
  bool create = false;  // file-write-create
  bool strict = false;  // the subpath reading that leaves out creating the subpath itself
};

// Whether `f` matches, and the specificity it brings (length*2, +1 for a literal; -1 none).
std::pair<bool, long> ref_match(const Sexpr& f, const Target& t, const Params& params) {
  const std::string head(f.items.empty() ? "" : f.items[0].atom);
  if (head == "literal" || head == "subpath") {
    const auto v = path_value(f, params);
    if (!v) return {false, -1};
    bool hit = head == "literal" ? t.text == *v : within(*v, t.text);
    if (head == "subpath" && hit && t.text == *v && t.create && t.strict) hit = false;
    return {hit, hit ? static_cast<long>(v->size()) * 2 + (head == "literal") : -1};
  }
  if (head == "require-not") {
    return {!ref_match(f.items[1], t, params).first, -1};
  }
  if (head == "require-any" || head == "require-all") {
    const bool all = head == "require-all";
    bool result = all;
    long spec = -1;
    for (size_t i = 1; i < f.items.size(); ++i) {
      auto [m, s] = ref_match(f.items[i], t, params);
      if (m) spec = std::max(spec, s);
      result = all ? result && m : result || m;
    }
    return {result, result ? spec : -1};
  }
  if (head == "local" || head == "remote") {
    const std::string pattern(f.items[2].atom);
    if (t.text.starts_with("unix:") || t.text.find(':') == std::string::npos) return {false, -1};
    const auto pc = pattern.rfind(':'), tc = t.text.rfind(':');
    const std::string ph = pattern.substr(0, pc), pp = pattern.substr(pc + 1);
    const std::string th = t.text.substr(0, tc), tp = t.text.substr(tc + 1);
    return {(ph == "*" || ph == th) && (pp == "*" || pp == tp), -1};
  }
  if (head == "target") return {t.text == "same-sandbox", -1};
  if (head == "sysctl-name" || head == "global-name") return {t.text == f.items[1].atom, -1};
  if (head == "sysctl-name-prefix") return {t.text.starts_with(f.items[1].atom), -1};
  return {false, -1};
}

bool covers(const std::string& rule_op, const std::string& op) {
  if (rule_op.ends_with('*')) return op.starts_with(rule_op.substr(0, rule_op.size() - 1));
  return rule_op == op;
}

enum class Precedence { Last, DenyWins, First, MostSpecific };

// The reference answer for `op` on `t` under one model.
bool ref_allows(const std::vector<Sexpr>& forms, const std::string& op, const Target& t,
                const Params& params, Precedence p) {
  bool default_allow = false;
  struct Hit {
    bool allow;
    long spec;
  };
  std::vector<Hit> hits;
  for (size_t i = 1; i < forms.size(); ++i) {
    const Sexpr& r = forms[i];
    if (r.items.size() == 2 && r.items[1].atom == "default") {
      default_allow = r.items[0].atom == "allow";
      continue;
    }
    const bool allow = r.items[0].atom == "allow";
    bool names = false;
    size_t k = 1;
    for (; k < r.items.size() && r.items[k].kind == Sexpr::Kind::Symbol; ++k)
      names = names || covers(std::string(r.items[k].atom), op);
    if (!names) continue;
    if (k == r.items.size()) {
      hits.push_back({allow, -1});
      continue;
    }
    bool any = false;
    long spec = -1;
    for (; k < r.items.size(); ++k) {
      auto [m, s] = ref_match(r.items[k], t, params);
      if (m) {
        any = true;
        spec = std::max(spec, s);
      }
    }
    if (any) hits.push_back({allow, spec});
  }
  if (hits.empty()) return default_allow;
  switch (p) {
    case Precedence::Last:
      return hits.back().allow;
    case Precedence::First:
      return hits.front().allow;
    case Precedence::DenyWins:
      return std::all_of(hits.begin(), hits.end(), [](const Hit& h) { return h.allow; });
    case Precedence::MostSpecific: {
      Hit best = hits.front();
      for (const Hit& h : hits)
        if (h.spec > best.spec || (h.spec == best.spec && !h.allow)) best = h;
      return best.allow;
    }
  }
  return false;
}

// --- What the policy denies, read plainly from docs/macos.md --------------------------

const std::vector<std::string> kFileOps = {
    "file-read-data",   "file-read-metadata", "file-read-xattr",  "file-write-data",
    "file-write-create", "file-write-unlink", "file-write-mode",  "file-write-xattr",
    "file-write-times", "file-write-flags",   "file-write-owner", "file-link",
    "file-ioctl",       "process-exec"};

bool platform_read(const std::string& path) {
  for (const char* p : {"/", "/etc", "/tmp", "/var"})
    if (path == p) return true;
  for (const char* p : {"/System", "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/lib",
                        "/usr/libexec", "/usr/share", "/private/etc", "/Library/Apple",
                        "/Library/Preferences", "/private/var/db/timezone", "/dev"})
    if (within(p, path)) return true;
  return false;
}

bool under_any(const std::vector<ir::ResolvedPath>& roots, const std::string& path) {
  return std::any_of(roots.begin(), roots.end(),
                     [&](const ir::ResolvedPath& r) { return within(r.path, path); });
}

// True when the policy denies `op` on `path` outright.
bool policy_denies_file(const ir::Resolved& r, const std::string& op, const std::string& path) {
  if (under_any(r.deny, path)) return true;
  if (op == "process-exec") return false;
  if (op.starts_with("file-read")) return !under_any(r.read, path) && !platform_read(path);
  // Every change: nothing in read-only mode, nothing in a protected path, nothing outside
  // the writable roots but the platform devices' data and the pty master's ioctl.
  if (op == "file-write-data" &&
      (path == "/dev/null" || path == "/dev/zero" || path == "/dev/ptmx" || within("/dev/fd", path)))
    return under_any(r.protect, path);
  if (op == "file-ioctl" && path == "/dev/ptmx") return false;
  if (r.mode == ir::Mode::ReadOnly) return true;
  if (under_any(r.protect, path)) return true;
  return !under_any(r.write, path);
}

bool policy_denies_network(const ir::Resolved& r, const std::string& target) {
  if (r.mode == ir::Mode::ReadOnly || r.network == ir::Network::None) return true;
  if (r.network == ir::Network::Loopback) return !target.starts_with("localhost:");
  return false;
}

// --- Edits ----------------------------------------------------------------------------

// The forms view their atoms: each string made here stays for the whole run (a deque
// does not move what it holds as it grows).
std::string_view kept(std::string s) {
  static std::deque<std::string> strings;
  return strings.emplace_back(std::move(s));
}
Sexpr sym(std::string s) { return {Sexpr::Kind::Symbol, kept(std::move(s)), {}, 0, 0}; }
Sexpr str(std::string s) { return {Sexpr::Kind::String, kept(std::move(s)), {}, 0, 0}; }
Sexpr list(std::vector<Sexpr> items) { return {Sexpr::Kind::List, "", std::move(items), 0, 0}; }

struct Editor {
  std::mt19937 rng;
  std::vector<std::string> paths;   // constants to write
  std::vector<std::string> params;  // parameter names
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }
  bool coin() { return pick(2) == 0; }

  Sexpr path_filter() {
    std::vector<Sexpr> f = {sym(coin() ? "literal" : "subpath")};
    if (!params.empty() && coin())
      f.push_back(list({sym("param"), str(params[pick(params.size())])}));
    else
      f.push_back(str(paths[pick(paths.size())]));
    return list(std::move(f));
  }
  Sexpr filter(int depth) {
    const size_t kind = depth > 2 ? 0 : pick(5);
    if (kind <= 1) return path_filter();
    if (kind == 2) return list({sym("require-not"), filter(depth + 1)});
    std::vector<Sexpr> f = {sym(kind == 3 ? "require-any" : "require-all")};
    for (size_t n = 1 + pick(3); n--;) f.push_back(filter(depth + 1));
    return list(std::move(f));
  }
  Sexpr rule() {
    static const std::vector<std::string> ops = {
        "file-read*",        "file-read-data",    "file-write*",      "file-write-data",
        "file-write-create", "file-write-unlink", "file-write-mode",  "file-write-xattr",
        "file-write-owner",  "file-link",         "file-ioctl",       "process-exec"};
    std::vector<Sexpr> r = {sym(coin() ? "allow" : "deny")};
    for (size_t n = 1 + pick(2); n--;) r.push_back(sym(ops[pick(ops.size())]));
    if (pick(10) == 0) return list(std::move(r));  // unconditional
    for (size_t n = 1 + pick(2); n--;) r.push_back(filter(0));
    return list(std::move(r));
  }
  Sexpr network_rule() {
    static const std::vector<std::string> addrs = {"localhost:*", "*:*", "*:443", "localhost:22",
                                                   "*:8080"};
    static const std::vector<std::string> ops = {"network-outbound", "network-bind",
                                                 "network-inbound", "network*"};
    return list({sym(coin() ? "allow" : "deny"), sym(ops[pick(ops.size())]),
                 list({sym(coin() ? "remote" : "local"), sym("ip"),
                       str(addrs[pick(addrs.size())])})});
  }

  // Every path filter below `e`, for changing one in place.
  static void path_filters(Sexpr& e, std::vector<Sexpr*>& out) {
    if (e.kind != Sexpr::Kind::List || e.items.empty()) return;
    if (e.items[0].atom == "literal" || e.items[0].atom == "subpath") {
      out.push_back(&e);
      return;
    }
    for (auto& c : e.items) path_filters(c, out);
  }

  // One random edit of the rules (forms after version and default).
  std::string edit(std::vector<Sexpr>& forms) {
    const size_t first_rule = 2;
    const size_t rules = forms.size() - first_rule;
    switch (pick(7)) {
      case 0: {  // insert a rule
        const size_t at = first_rule + pick(rules + 1);
        Sexpr r = pick(6) == 0 ? network_rule() : rule();
        const std::string what = "insert " + compiler::print_sexpr(r);
        forms.insert(forms.begin() + static_cast<long>(at), std::move(r));
        return what;
      }
      case 1: {  // delete a rule
        if (!rules) return "none";
        const size_t at = first_rule + pick(rules);
        const std::string what = "delete " + compiler::print_sexpr(forms[at]);
        forms.erase(forms.begin() + static_cast<long>(at));
        return what;
      }
      case 2: {  // flip an action
        if (!rules) return "none";
        Sexpr& r = forms[first_rule + pick(rules)];
        r.items[0].atom = r.items[0].atom == "allow" ? "deny" : "allow";
        return "flip " + compiler::print_sexpr(r);
      }
      case 3:
      case 4: {  // change a path filter: its kind or its value
        std::vector<Sexpr*> fs;
        for (size_t i = first_rule; i < forms.size(); ++i) path_filters(forms[i], fs);
        if (fs.empty()) return "none";
        Sexpr& f = *fs[pick(fs.size())];
        const std::string before = compiler::print_sexpr(f);
        if (coin())
          f.items[0].atom = f.items[0].atom == "literal" ? "subpath" : "literal";
        else
          f = path_filter();
        return "change " + before + " to " + compiler::print_sexpr(f);
      }
      case 5: {  // change an operation
        if (!rules) return "none";
        Sexpr& r = forms[first_rule + pick(rules)];
        const Sexpr fresh = rule();
        if (r.items.size() < 2 || r.items[1].kind != Sexpr::Kind::Symbol ||
            fresh.items[1].atom.starts_with("network") !=
                r.items[1].atom.starts_with("network"))
          return "none";
        const std::string before = compiler::print_sexpr(r);
        r.items[1] = fresh.items[1];
        return "operation of " + before + " to " + std::string(r.items[1].atom);
      }
      default: {  // wrap a rule's filters in require-not, or drop them
        if (!rules) return "none";
        Sexpr& r = forms[first_rule + pick(rules)];
        size_t k = 1;
        while (k < r.items.size() && r.items[k].kind == Sexpr::Kind::Symbol) ++k;
        if (k == r.items.size()) return "none";
        const std::string before = compiler::print_sexpr(r);
        if (coin()) {
          Sexpr any = list({sym("require-any")});
          any.items.insert(any.items.end(), r.items.begin() + static_cast<long>(k), r.items.end());
          r.items.resize(k);
          r.items.push_back(list({sym("require-not"), std::move(any)}));
        } else {
          r.items.resize(k);
        }
        return "filters of " + before + " to " + compiler::print_sexpr(r);
      }
    }
  }
};

std::string render(const std::vector<Sexpr>& forms) {
  std::string out;
  for (const auto& f : forms) out += compiler::print_sexpr(f) + "\n";
  return out;
}

// Every string below `e`: path values and addresses alike.
void strings_of(const Sexpr& e, std::vector<std::string>& out) {
  if (e.kind == Sexpr::Kind::String) out.emplace_back(e.atom);
  for (const auto& c : e.items) strings_of(c, out);
}

std::string parent(const std::string& p) {
  const auto slash = p.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return p.substr(0, slash);
}

// The first grant the reference finds that the policy denies, or "".
std::string reference_violation(const ir::Resolved& r, const std::vector<Sexpr>& forms,
                                const Params& params) {
  std::vector<std::string> named;
  for (const auto& f : forms) strings_of(f, named);
  for (const auto& [k, v] : params) named.push_back(v);
  for (const auto* group : {&r.read, &r.write, &r.protect, &r.deny})
    for (const auto& p : *group) named.push_back(p.path);
  std::set<std::string> paths = {"/", "/zz-elsewhere"}, addresses;
  for (const auto& n : named) {
    if (n.starts_with('/') || n.starts_with("${")) {
      for (const std::string& p : {n, parent(n), n + "/zz-child", n + "/zz-child/zz-grandchild",
                                   parent(n) + "/zz-sibling", n + "zz"})
        paths.insert(p);
    } else if (const auto colon = n.rfind(':'); colon != std::string::npos) {
      const std::string port = n.substr(colon + 1) == "*" ? "7" : n.substr(colon + 1);
      for (const char* host : {"localhost:", "203.0.113.9:"}) addresses.insert(host + port);
    }
  }
  addresses.insert("203.0.113.9:7");
  addresses.insert("localhost:7");
  for (const auto& path : paths)
    for (const auto& op : kFileOps) {
      if (!policy_denies_file(r, op, path)) continue;
      for (const bool strict : {false, true})
        for (auto p : {Precedence::Last, Precedence::DenyWins, Precedence::First,
                       Precedence::MostSpecific})
          if (ref_allows(forms, op, {path, op == "file-write-create", strict}, params, p))
            return op + " " + path;
    }
  for (const auto& a : addresses)
    for (const char* op : {"network-outbound", "network-bind", "network-inbound"}) {
      if (!policy_denies_network(r, a)) continue;
      for (auto p : {Precedence::Last, Precedence::DenyWins, Precedence::First,
                     Precedence::MostSpecific})
        if (ref_allows(forms, op, {a}, params, p)) return std::string(op) + " " + a;
    }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sbpl_property, *boost::unit_test::label("mutation"))

BOOST_AUTO_TEST_CASE(every_edited_golden_profile_the_verifier_accepts_grants_nothing_denied) {
  std::mt19937 seed(20261204);
  for (auto& g : test::golden_compiles(compiler::Target::Macos)) {
    if (g.name == "large") continue;  // 3 000 forms: its edits take minutes, not seconds
    const ir::Resolved& r = g.compiled.resolved;
    const std::string text = g.artifact("profile.sb"), params_text = g.artifact("params.txt");
    const auto params_list = compiler::parse_params_text(params_text);
    BOOST_REQUIRE_MESSAGE(params_list, params_list.error().message);
    Params params;
    for (const auto& [k, v] : *params_list) params.emplace(k, v);
    const auto original = *compiler::parse_sexprs(text);

    Editor editor{std::mt19937(seed()), {}, {}};
    for (const auto& [k, v] : params) editor.params.push_back(k);
    editor.paths = {"/Users",       "/etc/passwd", "/dev/tty",       "/dev/null",
                    "/private/tmp", "/",           "/opt",           "/usr/lib",
                    "/dev/fd",      "/System",     "/Library/Keychains"};
    for (const auto* group : {&r.write, &r.protect, &r.deny})
      for (const auto& p : *group)
        if (p.path.starts_with('/')) editor.paths.push_back(p.path);

    int accepted = 0, refused = 0;
    for (int n = 0; n < 150; ++n) {
      auto forms = original;
      std::string what;
      for (size_t edits = 1 + editor.pick(3); edits--;) what += editor.edit(forms) + "; ";
      const std::string mutant = render(forms);
      const auto findings = compiler::verify_sbpl(r, mutant, *params_list);
      if (!findings.empty()) {
        ++refused;
        continue;
      }
      ++accepted;
      const std::string violation = reference_violation(r, forms, params);
      BOOST_TEST(violation.empty(), g.name << ": accepted, yet the reference allows " << violation
                                           << " which the policy denies; edits: " << what);
    }
    BOOST_TEST_MESSAGE(g.name << ": " << accepted << " edited profiles accepted, " << refused
                              << " refused");
    // Both outcomes occur, or the property says nothing.
    BOOST_TEST(accepted > 0, g.name);
    BOOST_TEST(refused > 0, g.name);
  }
}

BOOST_AUTO_TEST_SUITE_END()
