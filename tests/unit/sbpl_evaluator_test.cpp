#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"

#include <boost/test/unit_test.hpp>

using namespace zpolicy::compiler;

namespace {

SbplProfile profile(const std::string& rules, const char* def = "(deny default)") {
  auto p = parse_sbpl(std::string("(version 1)\n") + def + "\n" + rules);
  if (!p) BOOST_FAIL(p.error().loc.str() + ": " + p.error().message);
  return *p;
}

std::string parse_error(const std::string& text) {
  auto p = parse_sbpl(text);
  return p ? "" : p.error().loc.str() + ": " + p.error().message;
}

// Each of the query's answers, a bit per model, must be decide_all_models()'s, asked
// for the targets in the order given.
void expect_answers_of_all_models(SbplTargetQuery& query, const SbplProfile& bound,
                                  const SbplParams& params, const std::vector<std::string>& ops,
                                  const std::vector<const char*>& targets) {
  for (const char* t : targets) {
    const auto answers = query.allowed(t);
    BOOST_REQUIRE_EQUAL(answers.size(), ops.size());
    for (size_t k = 0; k < ops.size(); ++k) {
      uint32_t want = 0;
      auto decisions = decide_all_models(bound, ops[k], t, params, false);
      for (size_t m = 0; m < decisions.size(); ++m)
        if (decisions[m].allowed) want |= uint32_t{1} << m;
      BOOST_TEST(answers[k] == want, ops[k] << " " << t);
    }
  }
}

const SbplModel kLast{SbplPrecedence::LastMatchWins, SbplSubpathSelf::Included};
const SbplModel kDeny{SbplPrecedence::DenyWins, SbplSubpathSelf::Included};
const SbplModel kFirst{SbplPrecedence::FirstMatchWins, SbplSubpathSelf::Included};
const SbplModel kSpecific{SbplPrecedence::MostSpecificWins, SbplSubpathSelf::Included};
const SbplModel kStrict{SbplPrecedence::LastMatchWins, SbplSubpathSelf::ExcludedOnCreate};

bool allowed(const SbplProfile& p, const char* op, const char* target, const SbplModel& m = kLast,
             const SbplParams& params = {}) {
  return decide(p, op, target, params, m).allowed;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sbpl_evaluator)

BOOST_AUTO_TEST_CASE(reads_balanced_forms_and_comments) {
  auto forms = parse_sexprs("; head\n(a (b \"c d\") 1) ; tail\n(e)");
  BOOST_REQUIRE(forms);
  const auto& v = *forms;
  BOOST_REQUIRE_EQUAL(v.size(), 2u);
  BOOST_TEST(print_sexpr(v[0]) == "(a (b \"c d\") 1)");
  BOOST_TEST(v[0].line == 2);
  BOOST_TEST(v[1].line == 3);
}

BOOST_AUTO_TEST_CASE(refuses_everything_outside_the_emitted_subset) {
  BOOST_TEST(parse_error("(version 1)\n(deny default)\n(allow file-read*").find("unbalanced '('") !=
             std::string::npos);
  BOOST_TEST(parse_error("(version 1)\n(deny default))").find("unbalanced ')'") !=
             std::string::npos);
  BOOST_TEST(
      parse_error("(version 1)(deny default)(allow file-read* (regex #\"^/a\"))").find("regex") !=
      std::string::npos);
  BOOST_TEST(parse_error("(version 1)(deny default)(allow file-read* (literal \"/a\\\"b\"))")
                 .find("backslash") != std::string::npos);
  BOOST_TEST(parse_error("(version 1)(deny default)(allow mach-register)").find("mach-register") !=
             std::string::npos);
  BOOST_TEST(parse_error("(version 1)(deny default)(allow file-read* (vnode-type DIRECTORY))")
                 .find("vnode-type") != std::string::npos);
  BOOST_TEST(parse_error("(deny default)").find("(version 1)") != std::string::npos);
  BOOST_TEST(parse_error("(version 2)(deny default)").find("(version 1)") != std::string::npos);
  BOOST_TEST(parse_error("(version 1)(allow file-read*)").find("second form") != std::string::npos);
  BOOST_TEST(parse_error("(version 1)(deny default)(allow default)").find("second default") !=
             std::string::npos);
  BOOST_TEST(parse_error("(version 1)(deny default)(allow file-read* (literal \"rel\"))")
                 .find("absolute") != std::string::npos);
  BOOST_TEST(
      parse_error("(version 1)(deny default)(allow network-outbound (remote ip \"1.2.3.4:*\"))")
          .find("localhost") != std::string::npos);
  BOOST_TEST(parse_error("(version 1)(deny default)(allow file-read* (require-not (literal \"/a\") "
                         "(literal \"/b\")))")
                 .find("require-not") != std::string::npos);
  BOOST_TEST(parse_error("(version 1)(deny default)(allow file-read* (literal (string-append "
                         "(param \"A\") \"/b\")))")
                 .find("param") != std::string::npos);
  BOOST_TEST(parse_error("(version 1)\n(deny default)\n  (allow bogus)").find("profile.sb:3:3") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(deny_default_and_wildcards) {
  auto p = profile("(allow file-write* (subpath \"/w\"))");
  BOOST_TEST(allowed(p, "file-write-create", "/w/x"));
  BOOST_TEST(allowed(p, "file-write-unlink", "/w/x"));
  BOOST_TEST(!allowed(p, "file-read-data", "/w/x"));
  // file-link is not a file-write operation: a write rule never grants hard links.
  BOOST_TEST(!allowed(p, "file-link", "/w/x"));
  BOOST_TEST(!allowed(p, "file-write-data", "/x"));
  BOOST_TEST(allowed(profile("", "(allow default)"), "file-link", "/x"));
}

BOOST_AUTO_TEST_CASE(subpath_respects_component_boundaries) {
  auto p = profile("(allow file-read* (subpath \"/a/b\"))");
  BOOST_TEST(allowed(p, "file-read-data", "/a/b"));
  BOOST_TEST(allowed(p, "file-read-data", "/a/b/c/d"));
  BOOST_TEST(!allowed(p, "file-read-data", "/a/bc"));
  BOOST_TEST(!allowed(p, "file-read-data", "/a"));
  auto root = profile("(allow file-read* (subpath \"/\"))");
  BOOST_TEST(allowed(root, "file-read-data", "/x"));
  BOOST_TEST(allowed(root, "file-read-data", "${WORKSPACE}/x"));
  auto lit = profile("(allow file-read* (literal \"/a/b\"))");
  BOOST_TEST(allowed(lit, "file-read-data", "/a/b"));
  BOOST_TEST(!allowed(lit, "file-read-data", "/a/b/c"));
}

BOOST_AUTO_TEST_CASE(require_all_any_not_and_params) {
  auto p = profile(
      "(allow file-write* (require-all (require-any (subpath (param \"W0\")) (subpath (param "
      "\"W1\"))) (require-not (literal (param \"P\"))) (require-not (subpath (param \"P\")))))");
  SbplParams params = {{"W0", "/w0"}, {"W1", "/w1"}, {"P", "/w0/.git"}};
  BOOST_TEST(allowed(p, "file-write-data", "/w0/a", kLast, params));
  BOOST_TEST(allowed(p, "file-write-data", "/w1/a", kLast, params));
  BOOST_TEST(allowed(p, "file-write-data", "/w0/.github", kLast, params));
  BOOST_TEST(!allowed(p, "file-write-data", "/w0/.git", kLast, params));
  BOOST_TEST(!allowed(p, "file-write-data", "/w0/.git/config", kLast, params));
  BOOST_TEST(!allowed(p, "file-write-data", "/w2/a", kLast, params));
  // An undefined parameter matches nothing, and the profile names it.
  BOOST_TEST(!allowed(p, "file-write-data", "/w0/a", kLast, {}));
  BOOST_TEST((referenced_params(p) == std::vector<std::string>{"P", "W0", "W1"}));
}

BOOST_AUTO_TEST_CASE(the_precedence_models_differ_where_rules_overlap) {
  auto deny_last =
      profile("(allow file-read* (subpath \"/a\"))\n(deny file-read* (subpath \"/a/b\"))");
  BOOST_TEST(!allowed(deny_last, "file-read-data", "/a/b/c", kLast));
  BOOST_TEST(!allowed(deny_last, "file-read-data", "/a/b/c", kDeny));
  BOOST_TEST(allowed(deny_last, "file-read-data", "/a/b/c", kFirst));
  BOOST_TEST(!allowed(deny_last, "file-read-data", "/a/b/c", kSpecific));

  auto deny_first =
      profile("(deny file-read* (subpath \"/a/b\"))\n(allow file-read* (subpath \"/a\"))");
  BOOST_TEST(allowed(deny_first, "file-read-data", "/a/b/c", kLast));
  BOOST_TEST(!allowed(deny_first, "file-read-data", "/a/b/c", kDeny));
  BOOST_TEST(!allowed(deny_first, "file-read-data", "/a/b/c", kFirst));
  BOOST_TEST(!allowed(deny_first, "file-read-data", "/a/b/c", kSpecific));

  // A more specific allow inside a broader deny: only most-specific lets it through first.
  auto allow_inner =
      profile("(allow file-read* (literal \"/a/b\"))\n(deny file-read* (subpath \"/a\"))");
  BOOST_TEST(allowed(allow_inner, "file-read-data", "/a/b", kSpecific));
  BOOST_TEST(!allowed(allow_inner, "file-read-data", "/a/b", kLast));
}

BOOST_AUTO_TEST_CASE(the_strict_subpath_reading_leaves_creation_of_the_root_uncovered) {
  auto bare = profile(
      "(allow file-write* (require-all (subpath \"/w\") (require-not (subpath \"/w/.git\"))))");
  BOOST_TEST(!allowed(bare, "file-write-create", "/w/.git", kLast));
  BOOST_TEST(allowed(bare, "file-write-create", "/w/.git", kStrict));
  BOOST_TEST(!allowed(bare, "file-write-data", "/w/.git", kStrict));
  auto paired = profile(
      "(allow file-write* (require-all (subpath \"/w\") (require-not (literal \"/w/.git\")) "
      "(require-not (subpath \"/w/.git\"))))");
  BOOST_TEST(!allowed(paired, "file-write-create", "/w/.git", kStrict));
  BOOST_TEST(allowed(paired, "file-write-create", "/w/.github", kStrict));
}

BOOST_AUTO_TEST_CASE(network_process_and_service_filters) {
  auto p = profile(
      "(allow network-outbound (remote ip \"localhost:*\"))\n"
      "(allow network-bind (local ip \"*:8080\"))\n"
      "(allow signal (target same-sandbox))\n"
      "(allow sysctl-read (sysctl-name \"hw.ncpu\") (sysctl-name-prefix \"kern.proc.pid.\"))\n"
      "(allow mach-lookup (global-name \"com.apple.x\"))\n"
      "(allow network*)",
      "(deny default)");
  auto q = profile(
      "(allow network-outbound (remote ip \"localhost:*\"))\n"
      "(allow network-bind (local ip \"*:8080\"))\n"
      "(allow signal (target same-sandbox))\n"
      "(allow sysctl-read (sysctl-name \"hw.ncpu\") (sysctl-name-prefix \"kern.proc.pid.\"))\n"
      "(allow mach-lookup (global-name \"com.apple.x\"))");
  BOOST_TEST(allowed(q, "network-outbound", "localhost:443"));
  BOOST_TEST(!allowed(q, "network-outbound", "192.0.2.1:443"));
  BOOST_TEST(!allowed(q, "network-outbound", "unix:/var/run/docker.sock"));
  BOOST_TEST(allowed(q, "network-bind", "192.0.2.1:8080"));
  BOOST_TEST(!allowed(q, "network-bind", "192.0.2.1:8081"));
  BOOST_TEST(allowed(q, "signal", "same-sandbox"));
  BOOST_TEST(!allowed(q, "signal", "host-process"));
  BOOST_TEST(allowed(q, "sysctl-read", "hw.ncpu"));
  BOOST_TEST(!allowed(q, "sysctl-read", "hw.ncpu2"));
  BOOST_TEST(allowed(q, "sysctl-read", "kern.proc.pid.12"));
  BOOST_TEST(allowed(q, "mach-lookup", "com.apple.x"));
  BOOST_TEST(!allowed(q, "mach-lookup", "com.apple.y"));
  BOOST_TEST(allowed(p, "network-outbound", "unix:/var/run/docker.sock"));
  BOOST_TEST(allowed(p, "network-inbound", "192.0.2.1:1"));
}

BOOST_AUTO_TEST_CASE(decide_all_models_agrees_with_decide_model_by_model) {
  auto p = profile(
      "(allow file-write* (require-all (subpath \"/w\") (require-not (subpath \"/w/.git\"))))\n"
      "(deny file-write* (subpath \"/w/.git\"))\n(allow file-write* (literal \"/w/.git/x\"))");
  for (const char* op : {"file-write-create", "file-write-data"})
    for (const char* t : {"/w/.git", "/w/.git/x", "/w/a", "/v"}) {
      auto all = decide_all_models(p, op, t, {});
      BOOST_REQUIRE_EQUAL(all.size(), all_sbpl_models().size());
      for (size_t i = 0; i < all.size(); ++i) {
        auto one = decide(p, op, t, {}, all_sbpl_models()[i]);
        BOOST_TEST(all[i].allowed == one.allowed,
                   op << " " << t << " " << all_sbpl_models()[i].str());
        BOOST_TEST(all[i].trace == one.trace);
      }
    }
}

BOOST_AUTO_TEST_CASE(the_trace_names_the_deciding_rule_and_line) {
  auto p = profile("\n(allow file-read* (subpath \"/a\"))");
  auto d = decide(p, "file-read-data", "/a/x", {}, kLast);
  BOOST_TEST(d.rule == 0);
  BOOST_TEST(d.trace ==
             "allowed by rule 0 (profile.sb line 4) (allow file-read* ...) via (subpath \"/a\")");
  auto w = profile(
      "(allow file-write* (require-all (subpath (param \"W\")) (require-not (literal \"/w/x\"))))");
  BOOST_TEST(decide(w, "file-write-data", "/w/y", {{"W", "/w"}}, kLast).trace ==
             "allowed by rule 0 (profile.sb line 3) (allow file-write* ...) via (subpath (param "
             "\"W\")) = /w");
  auto n = decide(p, "file-read-data", "/b", {}, kLast);
  BOOST_TEST(n.rule == -1);
  BOOST_TEST(n.trace == "denied by the default rule (no rule matches)");
}

BOOST_AUTO_TEST_SUITE_END()

// The evaluator looks up the path filters a target meets through an index and evaluates
// only the filters above them; it must give the answer, rule and specificity of comparing
// every filter in order, which this plain reading (written here, apart from it) does.
namespace {

struct Plain {
  bool matched = false;
  long specificity = -1;
};

Plain plain(const SbplProfile& p, const SbplFilter& f, const std::string& t, bool strict,
            const SbplParams& params) {
  using K = SbplFilter::Kind;
  if (f.kind == K::Literal || f.kind == K::Subpath) {
    std::string v(f.value);
    if (f.is_param) {
      auto it = params.find(f.value);
      if (it == params.end()) return {};
      v = std::string(it->second);
    }
    const bool below = v == "/" ? (t != "/" && (t[0] == '/' || t.starts_with("${")))
                                : t.size() > v.size() && t.starts_with(v) && t[v.size()] == '/';
    const bool hit = t == v ? (f.kind == K::Literal || !strict) : f.kind == K::Subpath && below;
    return hit ? Plain{true, static_cast<long>(v.size()) * 2 + (f.kind == K::Literal)} : Plain{};
  }
  if (f.kind == K::RequireNot) return {!plain(p, p.children(f)[0], t, strict, params).matched, -1};
  Plain out{f.kind == K::RequireAll, -1};
  for (const auto& c : p.children(f)) {
    const Plain m = plain(p, c, t, strict, params);
    if (f.kind == K::RequireAll && !m.matched) return {};
    if (m.matched && (!out.matched || m.specificity > out.specificity)) out = m;
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sbpl_evaluator_index)

BOOST_AUTO_TEST_CASE(the_indexed_profile_answers_like_the_linear_scan) {
  auto p = profile(
      "(allow file-write* (require-all (require-any (subpath (param \"W\")) (literal \"/x\")"
      " (subpath \"/w\")) (require-not (literal (param \"G\"))) (require-not (subpath (param "
      "\"G\"))) (require-not (literal \"/w/ab\"))))\n"
      "(deny file-write-unlink (literal \"/w\") (subpath (param \"G\")) (literal (param \"G\")))\n"
      "(allow file-read* (subpath \"/\"))\n"
      "(deny file-read* (subpath (param \"W\")) (subpath \"/w/a\") (literal \"/w/a\"))");
  const SbplParams params{{"W", "/w"}, {"G", "/w/a"}};
  const SbplProfile bound = bind_params(p, params);
  for (const char* op :
       {"file-write-create", "file-write-data", "file-write-unlink", "file-read-data"})
    for (const char* t : {"/", "/w", "/w/a", "/w/a/b", "/w/ab", "/w/abc", "/x", "/x/y", "/v",
                          "${HOME}/w", "/w//a"}) {
      auto indexed = decide_all_models(bound, op, t, params);
      for (size_t i = 0; i < indexed.size(); ++i) {
        const bool strict = i >= 4 && std::string(op) == "file-write-create";
        std::vector<std::pair<int, Plain>> matched;
        for (size_t r = 0; r < p.rules.size(); ++r) {
          const auto& rule = p.rules[r];
          bool names = false;
          for (const auto& o : rule.operations)
            names = names || o == op || (o.ends_with('*') && std::string(op).starts_with(o.substr(0, o.size() - 1)));
          Plain m{rule.first_filter == rule.end_filter, -1};
          for (const auto& f : p.filters_of(rule)) {
            const Plain fm = plain(p, f, t, strict, params);
            if (fm.matched && (!m.matched || fm.specificity > m.specificity)) m = fm;
          }
          if (names && m.matched) matched.emplace_back(static_cast<int>(r), m);
        }
        int rule = matched.empty() ? -1 : matched.back().first;  // last match
        if (i % 4 == 1) {  // the first deny, else the first match
          rule = matched.empty() ? -1 : matched.front().first;
          for (const auto& [r, m] : matched)
            if (!p.rules[r].allow && p.rules[rule].allow) rule = r;
        }
        if (i % 4 == 2) rule = matched.empty() ? -1 : matched.front().first;
        if (i % 4 == 3 && !matched.empty()) {
          auto best = matched.front();
          for (const auto& e : matched)
            if (e.second.specificity > best.second.specificity ||
                (e.second.specificity == best.second.specificity && !p.rules[e.first].allow))
              best = e;
          rule = best.first;
        }
        BOOST_TEST(indexed[i].rule == rule, op << " " << t << " " << all_sbpl_models()[i].str());
        BOOST_TEST(indexed[i].allowed == (rule < 0 ? p.default_allow : p.rules[rule].allow));
      }
    }
}

// SbplTargetQuery shares the matching of a target among operations: each answer must
// still be decide_all_models()'s. The require-all and require-any rules include some
// whose match follows from their indexed lists alone, worked out once for targets those
// lists do not name, and some (the require-not of a literal inside a require-any) that
// match by the target itself.
BOOST_AUTO_TEST_CASE(a_target_query_answers_each_operation_like_decide_all_models) {
  auto p = profile(
      "(allow file-write* (require-all (subpath (param \"W\")) (require-not (literal "
      "\"/w/g\"))))\n"
      "(allow file-write-mode (require-all (require-any (subpath \"/v\") (require-not (literal "
      "\"/w/a\")))))\n"
      "(deny file-link (require-any (require-all (subpath \"/w\") (require-not (subpath (param "
      "\"G\"))))))\n"
      "(deny file-write-unlink (literal \"/w\") (subpath (param \"G\")))\n"
      "(allow file-read-data file-write-data (literal \"/w/g\"))\n"
      "(allow file-read* (subpath \"/\"))\n"
      "(deny file-read* file-write* process-exec (subpath \"/w/g\") (literal \"/w/g\"))\n"
      "(allow process-exec (require-all (require-not (subpath (param \"G\")))))");
  const SbplParams params{{"W", "/w"}, {"G", "/w/g"}};
  const SbplProfile bound = bind_params(p, params);
  const std::vector<std::string> ops = {
      "file-read-data",    "file-read-metadata", "file-write-data",
      "file-write-create", "file-write-mode",    "file-write-unlink",
      "file-link",         "process-exec",       "file-write-flags"};
  SbplTargetQuery query(bound, ops);
  expect_answers_of_all_models(query, bound, params, ops,
                               {"/", "/w", "/w/g", "/w/g/x", "/w/gx", "/w/a", "/v", "${HOME}/w"});
}

// Targets share the look-ups of the ancestors they have in common with the one asked
// before: with rules that match through the index alone (as the emitter's require-all
// of require-any and require-not lists does) and with one that reads the target itself
// (a require-not of a literal in a require-any), each answer must still be
// decide_all_models()'s, in the sorted order a verifier asks and out of it.
BOOST_AUTO_TEST_CASE(a_target_query_answers_alike_in_any_order_of_targets) {
  const SbplParams params{{"W", "/w"}, {"G", "/w/g"}};
  const std::vector<std::string> ops = {"file-read-data", "file-write-data", "file-write-create",
                                        "process-exec"};
  auto check = [&](const std::string& rules, const std::vector<const char*>& targets) {
    const SbplProfile bound = bind_params(profile(rules), params);
    SbplTargetQuery query(bound, ops);
    expect_answers_of_all_models(query, bound, params, ops, targets);
  };
  check(
      "(allow file-read* (subpath \"/\"))\n"
      "(allow file-write* (require-all (require-any (subpath (param \"W\"))) (require-not "
      "(literal \"/w/g\"))))\n"
      "(deny file-write* (literal \"/w/g\") (subpath \"/w/g/h\"))\n"
      "(allow process-exec (require-all (require-not (subpath (param \"G\")))))",
      {"/",        "/a",     "/a/b",   "/w",        "/w/a",     "/w/a/b",       "/w/a/c",
       "/w/ab",    "/w/g",   "/w/g/h", "/w/g/h/i",  "/w/g/h/j", "/w/g/x",       "/w/g/y",
       "/w/gx",    "/x",     "/y",     "${HOME}/w", "host",     "same-sandbox", "/w/a/b",
       "/w/g/h/i", "/w/g/x", "/w/g",   "/w/gx",     "/"});
  check(
      "(allow file-read* (subpath (param \"W\")))\n"
      "(deny file-read-data (require-any (require-not (literal \"/w/b\"))))",
      {"/w", "/w/a", "/w/b", "/w/c"});
}

BOOST_AUTO_TEST_SUITE_END()
