#include <boost/test/unit_test.hpp>
#include <set>

#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"
#include "emitters/sbpl/profile.hpp"
#include "tests/unit/sbpl_fixtures.hpp"

using namespace zpolicy;
namespace fx = zpolicy::test::sbpl;

namespace {

std::vector<std::pair<std::string, ir::Resolved>> all_fixtures() {
  return {{"default-portable", fx::default_portable()},
          {"default-bound", fx::default_bound("/Users/u/proj")},
          {"read-only", fx::read_only()},
          {"deny-roots-loopback", fx::deny_roots_loopback()},
          {"partial-read-full-network", fx::partial_read_full_network()},
          {"nested-roots", fx::nested_roots()},
          {"danger", fx::danger()}};
}

// The profile views `text`, which the caller keeps.
compiler::SbplProfile parsed(const std::string& text) {
  auto p = compiler::parse_sbpl(text);
  if (!p) BOOST_FAIL(p.error().loc.str() + ": " + p.error().message);
  return *p;
}

std::string value_of(const emitters::sbpl::Profile& p, std::string_view name) {
  for (const auto& [n, v] : p.params)
    if (n == name) return v;
  BOOST_FAIL("no parameter " + std::string(name));
  return "";
}

// The text with every parameter name left out: what depends on the policy's shape only.
std::string without_names(std::string text) {
  for (size_t at = text.find("(param \""); at != std::string::npos;
       at = text.find("(param \"", at + 1)) {
    const size_t end = text.find('"', at + 8);
    text.erase(at + 8, end - (at + 8));
  }
  return text;
}

bool is_name(const std::string& n) {
  return !n.empty() &&
         n.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
}

std::string name_of(const emitters::sbpl::Profile& p, std::string_view value) {
  for (const auto& [n, v] : p.params)
    if (v == value) return n;
  BOOST_FAIL("no parameter for " + std::string(value));
  return "";
}

bool covers_write(const compiler::SbplRule& r) {
  for (const auto& op : r.operations)
    if (op == "file-write*" || op.starts_with("file-write-") || op == "file-link") return true;
  return false;
}

// The filters of a rule's require-all that are (require-not (KIND (param NAME))), as
// "KIND PARAM-VALUE" strings.
std::set<std::string> exclusions(const compiler::SbplProfile& sp, const compiler::SbplRule& r,
                                 const emitters::sbpl::Profile& p) {
  std::set<std::string> out;
  const auto filters = sp.filters_of(r);
  BOOST_REQUIRE_EQUAL(filters.size(), 1u);
  BOOST_REQUIRE(filters[0].kind == compiler::SbplFilter::Kind::RequireAll);
  for (const auto& f : sp.children(filters[0])) {
    if (f.kind != compiler::SbplFilter::Kind::RequireNot) continue;
    BOOST_REQUIRE_EQUAL(sp.children(f).size(), 1u);
    const auto& inner = sp.children(f)[0];
    BOOST_REQUIRE(inner.is_param);
    out.insert(
        std::string(inner.kind == compiler::SbplFilter::Kind::Literal ? "literal " : "subpath ") +
        value_of(p, inner.value));
  }
  return out;
}

// The result points into `sp`, so a temporary profile is refused.
const compiler::SbplRule* allow_file_write_rule(compiler::SbplProfile&&) = delete;
const compiler::SbplRule* allow_file_write_rule(const compiler::SbplProfile& sp) {
  for (const auto& r : sp.rules)
    if (r.allow && r.operations == std::vector<std::string_view>{"file-write*"}) return &r;
  return nullptr;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sbpl_emitter)

BOOST_AUTO_TEST_CASE(every_profile_parses_as_the_emitted_subset_and_is_deterministic) {
  for (const auto& [name, r] : all_fixtures()) {
    BOOST_TEST_CONTEXT(name) {
      auto a = emitters::sbpl::emit(r);
      auto b = emitters::sbpl::emit(r);
      BOOST_TEST(a.text == b.text);
      BOOST_TEST((a.params == b.params));
      auto sp = parsed(a.text);
      BOOST_TEST(sp.default_allow == (r.mode == ir::Mode::DangerFullAccess));
      std::set<std::string> defined;
      for (const auto& [n, v] : a.params) BOOST_TEST(defined.insert(n).second, "duplicate " << n);
      for (const auto& n : compiler::referenced_params(sp)) BOOST_TEST(defined.count(n), n);
      // Every parameter is read by the profile: none is passed for nothing.
      auto used = compiler::referenced_params(sp);
      BOOST_TEST(used.size() == defined.size());
    }
  }
}

BOOST_AUTO_TEST_CASE(no_host_path_or_variable_appears_in_the_text) {
  for (const auto& [name, r] : all_fixtures()) {
    BOOST_TEST_CONTEXT(name) {
      auto p = emitters::sbpl::emit(r);
      BOOST_TEST(p.text.find("${") == std::string::npos);
      for (const auto& [n, v] : p.params)
        BOOST_TEST(p.text.find(v) == std::string::npos, n << "=" << v << " spliced into the text");
    }
  }
  // A path reaches the text only through its parameter's name, made of A-Z, 0-9 and
  // `_`: two workspaces, one profile but for the names.
  const auto a = emitters::sbpl::emit(fx::default_bound("/Users/u/proj"));
  BOOST_TEST(
      without_names(a.text) ==
      without_names(emitters::sbpl::emit(fx::default_bound("/private/var/folders/zz/w")).text));
  BOOST_TEST(without_names(a.text) ==
             without_names(emitters::sbpl::emit(fx::default_portable()).text));
  for (const auto& [n, v] : a.params) BOOST_TEST(is_name(n), n);
}

BOOST_AUTO_TEST_CASE(a_parameter_is_named_after_its_role_and_path) {
  const auto p = emitters::sbpl::emit(fx::default_portable());
  BOOST_TEST(name_of(p, "${WORKSPACE}") == "WRITABLE_ROOT_WORKSPACE");
  BOOST_TEST(name_of(p, "${WORKSPACE}/.git") == "PROTECTED_WORKSPACE_GIT");
  BOOST_TEST(name_of(p, "${WORKSPACE}/data") == "PROTECTED_ANCESTOR_WORKSPACE_DATA");
  // Dropping a protected path drops its parameter and renames no other (issue 16).
  ir::Resolved fewer = fx::default_portable();
  std::erase_if(fewer.protect, [](const auto& x) { return x.path == "${WORKSPACE}/.env"; });
  auto rest = p.params;
  std::erase_if(rest, [](const auto& nv) { return nv.second == "${WORKSPACE}/.env"; });
  BOOST_TEST(rest.size() + 1 == p.params.size());
  BOOST_TEST((emitters::sbpl::emit(fewer).params == rest));
}

BOOST_AUTO_TEST_CASE(paths_that_spell_one_name_get_distinct_names) {
  ir::Resolved r = fx::default_portable();
  r.protect = {fx::rp("${WORKSPACE}/.env.local", 8),
               fx::rp("${WORKSPACE}/.env-local", 8),
               fx::rp("${WORKSPACE}/.ENV_LOCAL", 8),
               fx::rp("${WORKSPACE}/a/**/b", 8),
               fx::rp("${WORKSPACE}/a/*/b", 8),
               fx::rp("${WORKSPACE}/" + std::string(60, 'x') + "/node_modules", 8)};
  const auto p = emitters::sbpl::emit(r);
  BOOST_TEST(name_of(p, "${WORKSPACE}/.env.local") == "PROTECTED_WORKSPACE_ENV_LOCAL");
  BOOST_TEST(name_of(p, "${WORKSPACE}/.env-local") == "PROTECTED_WORKSPACE_ENV_LOCAL_2");
  BOOST_TEST(name_of(p, "${WORKSPACE}/.ENV_LOCAL") == "PROTECTED_WORKSPACE_ENV_LOCAL_3");
  BOOST_TEST(name_of(p, "${WORKSPACE}/a/**/b") == "PROTECTED_WORKSPACE_A_ANY_B");
  BOOST_TEST(name_of(p, "${WORKSPACE}/a/*/b") == "PROTECTED_WORKSPACE_A_STAR_B");
  // A long path keeps the whole words of its last 48 characters.
  BOOST_TEST(name_of(p, "${WORKSPACE}/" + std::string(60, 'x') + "/node_modules") ==
             "PROTECTED_NODE_MODULES");
  std::set<std::string> names;
  for (const auto& [n, v] : p.params) BOOST_TEST(names.insert(n).second, n);
}

BOOST_AUTO_TEST_CASE(an_injection_named_workspace_cannot_change_the_profile) {
  const std::string evil = "/Users/u/x\")(allow default)(";
  auto p = emitters::sbpl::emit(fx::default_bound(evil));
  BOOST_TEST(without_names(p.text) ==
             without_names(emitters::sbpl::emit(fx::default_bound("/Users/u/proj")).text));
  BOOST_TEST(p.text.find("allow default") == std::string::npos);
  BOOST_TEST(name_of(p, evil) == "WRITABLE_ROOT_USERS_U_X_ALLOW_DEFAULT");
  BOOST_TEST(name_of(p, evil + "/.git") == "PROTECTED_USERS_U_X_ALLOW_DEFAULT_GIT");
  BOOST_TEST(!parsed(p.text).default_allow);
}

BOOST_AUTO_TEST_CASE(each_protected_path_and_deny_root_has_its_literal_and_subpath_pair) {
  for (const auto& [name, r] : all_fixtures()) {
    if (r.mode != ir::Mode::WorkspaceWrite) continue;
    BOOST_TEST_CONTEXT(name) {
      auto p = emitters::sbpl::emit(r);
      auto sp = parsed(p.text);
      const auto* rule = allow_file_write_rule(sp);
      BOOST_REQUIRE(rule);
      auto ex = exclusions(sp, *rule, p);
      for (const auto& prot : r.protect) {
        BOOST_TEST(ex.count("literal " + prot.path), prot.path);
        BOOST_TEST(ex.count("subpath " + prot.path), prot.path);
      }
      for (const auto& d : r.deny) {
        BOOST_TEST(ex.count("literal " + d.path), d.path);
        BOOST_TEST(ex.count("subpath " + d.path), d.path);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(directories_above_a_protected_path_are_excluded_as_literals) {
  auto p = emitters::sbpl::emit(fx::default_portable());
  auto sp = parsed(p.text);
  auto ex = exclusions(sp, *allow_file_write_rule(sp), p);
  BOOST_TEST(ex.count("literal ${WORKSPACE}/data"));
  BOOST_TEST(ex.count("literal ${WORKSPACE}"));
  // Only the literal: the rest of data/ stays writable.
  BOOST_TEST(!ex.count("subpath ${WORKSPACE}/data"));

  auto nested = emitters::sbpl::emit(fx::nested_roots());
  auto nsp = parsed(nested.text);
  auto nex = exclusions(nsp, *allow_file_write_rule(nsp), nested);
  for (const char* a : {"/Users/u", "/Users/u/src", "/Users/u/src/proj", "/Users/u/src/proj/data"})
    BOOST_TEST(nex.count(std::string("literal ") + a), a);
}

BOOST_AUTO_TEST_CASE(denials_come_last_and_deny_roots_are_the_final_rule) {
  for (const auto& [name, r] : all_fixtures()) {
    if (r.mode == ir::Mode::DangerFullAccess) continue;
    BOOST_TEST_CONTEXT(name) {
      auto p = emitters::sbpl::emit(r);
      auto sp = parsed(p.text);
      bool seen_deny = false;
      for (const auto& rule : sp.rules) {
        BOOST_TEST(!(seen_deny && rule.allow),
                   "an allow after a deny: profile.sb line " << rule.line);
        seen_deny = seen_deny || !rule.allow;
      }
      if (r.deny.empty()) continue;
      const auto& last = sp.rules.back();
      BOOST_TEST(!last.allow);
      BOOST_TEST((last.operations ==
                  std::vector<std::string_view>{"file-read*", "file-write*", "process-exec"}));
      BOOST_TEST(sp.filters_of(last).size() == 2 * r.deny.size());
    }
  }
}

BOOST_AUTO_TEST_CASE(network_none_emits_no_network_rule) {
  for (const auto& r : {fx::default_portable(), fx::read_only()}) {
    const auto emitted = emitters::sbpl::emit(r);
    auto sp = parsed(emitted.text);
    for (const auto& rule : sp.rules)
      for (const auto& op : rule.operations) {
        BOOST_TEST(!op.starts_with("network"), "profile.sb line " << rule.line);
        BOOST_TEST(op != "system-socket", "profile.sb line " << rule.line);
      }
  }
}

BOOST_AUTO_TEST_CASE(loopback_allows_only_localhost) {
  const auto emitted = emitters::sbpl::emit(fx::deny_roots_loopback());
  auto sp = parsed(emitted.text);
  int network_rules = 0;
  for (const auto& rule : sp.rules) {
    bool net = false;
    for (const auto& op : rule.operations) net = net || op.starts_with("network");
    if (!net) continue;
    ++network_rules;
    BOOST_TEST(rule.allow);
    BOOST_REQUIRE_EQUAL(sp.filters_of(rule).size(), 1u);
    BOOST_TEST(sp.filters_of(rule)[0].value == "localhost:*");
  }
  BOOST_TEST(network_rules == 3);
}

BOOST_AUTO_TEST_CASE(read_only_has_no_write_allow_on_any_root) {
  ir::Resolved r = fx::read_only();
  // Even a read-only policy that still lists writable roots gets none.
  r.write.push_back(fx::rp("${WORKSPACE}", 4));
  r.protect.push_back(fx::rp("${WORKSPACE}/.git", 10));
  r.network = ir::Network::Full;
  auto p = emitters::sbpl::emit(r);
  const auto sp = parsed(p.text);
  for (const auto& rule : sp.rules) {
    if (!rule.allow) continue;
    for (const auto& op : rule.operations)
      BOOST_TEST(!op.starts_with("network"), "profile.sb line " << rule.line);
    if (!covers_write(rule)) continue;
    // Only the fixed device rules (/dev/null, /dev/ptmx, /dev/fd) may write.
    for (const auto& f : sp.filters_of(rule)) {
      BOOST_TEST(!f.is_param, "profile.sb line " << rule.line);
      BOOST_TEST(f.value.starts_with("/dev/"), "profile.sb line " << rule.line);
    }
  }
  for (const auto& [n, v] : p.params) BOOST_TEST(!n.starts_with("WRITABLE_ROOT_"), n);
}

BOOST_AUTO_TEST_CASE(danger_full_access_says_so_plainly) {
  auto p = emitters::sbpl::emit(fx::danger());
  auto sp = parsed(p.text);
  BOOST_TEST(sp.default_allow);
  BOOST_TEST(sp.rules.empty());
  BOOST_TEST(p.params.empty());
}

BOOST_AUTO_TEST_CASE(params_text_is_one_name_value_per_line_in_order) {
  auto p = emitters::sbpl::emit(fx::deny_roots_loopback());
  std::string expected;
  for (const auto& [n, v] : p.params) expected += n + "=" + v + "\n";
  BOOST_TEST(emitters::sbpl::params_text(p) == expected);
  BOOST_TEST(p.params.front().first == "WRITABLE_ROOT_WORKSPACE");
  BOOST_TEST(p.params.back().first == "DENY_ROOT_WORKSPACE_SECRETS");
  BOOST_TEST(p.params.back().second == "${WORKSPACE}/secrets");
}

BOOST_AUTO_TEST_CASE(duplicate_paths_get_one_parameter) {
  ir::Resolved r = fx::default_portable();
  r.protect.push_back(fx::rp("${WORKSPACE}/.git", 11));
  r.deny.push_back(fx::rp("${HOME}/.ssh", 12));
  r.deny.push_back(fx::rp("${HOME}/.ssh", 13));
  auto p = emitters::sbpl::emit(r);
  int git = 0, ssh = 0;
  for (const auto& [n, v] : p.params) {
    git += v == "${WORKSPACE}/.git";
    ssh += v == "${HOME}/.ssh";
  }
  BOOST_TEST(git == 1);
  BOOST_TEST(ssh == 1);
}

BOOST_AUTO_TEST_SUITE_END()
