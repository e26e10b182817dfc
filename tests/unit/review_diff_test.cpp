// `zpolicy diff` and `check --within` through the public API (docs/review.md): the
// semantic difference of two policies, with the lines responsible on both sides.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "zpolicy/zpolicy.hpp"

namespace {

using zpolicy::Difference;
using zpolicy::DiffResult;
using zpolicy::Request;

std::string golden(const std::string& name) {
  std::ifstream in(std::string(ZPOLICY_SOURCE_DIR) + "/golden/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Request text(const std::string& yaml, const std::string& name) {
  Request r;
  r.policy_text = yaml;
  r.policy_name = name;
  return r;
}

// `yaml` with its one occurrence of `from` replaced by `to`.
std::string edited(const std::string& yaml, const std::string& from, const std::string& to) {
  const auto at = yaml.find(from);
  BOOST_TEST_REQUIRE((at != std::string::npos && yaml.find(from, at + 1) == std::string::npos),
                     "'" << from << "' once in the policy");
  return yaml.substr(0, at) + to + yaml.substr(at + from.size());
}

DiffResult diff_texts(const std::string& a, const std::string& b) {
  return zpolicy::diff(text(a, "old.yaml"), text(b, "new.yaml"));
}

std::string dump(const DiffResult& r) { return zpolicy::render_diff(r, zpolicy::DiffFormat::Text); }

const Difference* find(const DiffResult& r, const std::string& area, const std::string& subject) {
  for (const auto& d : r.differences)
    if (d.area == area && d.subject == subject) return &d;
  return nullptr;
}

// The filesystem difference for `op` whose subject starts with `path`.
const Difference* find_path(const DiffResult& r, const std::string& path, const std::string& op) {
  for (const auto& d : r.differences)
    if (d.area == "filesystem" && d.subject.starts_with(path) &&
        std::find(d.operations.begin(), d.operations.end(), op) != d.operations.end())
      return &d;
  return nullptr;
}

bool has_op(const Difference& d, const std::string& op) {
  return std::find(d.operations.begin(), d.operations.end(), op) != d.operations.end();
}

const char* const kGoldens[] = {"default.yaml", "deny-roots.yaml", "large.yaml", "loopback.yaml",
                                "read-only.yaml"};

}  // namespace

BOOST_AUTO_TEST_SUITE(review_diff)

BOOST_AUTO_TEST_CASE(a_policy_against_itself_has_no_semantic_difference) {
  for (const char* name : kGoldens) {
    const auto r = diff_texts(golden(name), golden(name));
    BOOST_TEST(r.exit_code == 0, name << ":\n" << dump(r));
    BOOST_TEST(r.differences.empty(), name);
    BOOST_TEST(dump(r) == "old.yaml -> new.yaml: no semantic difference\n", name);
  }
}

BOOST_AUTO_TEST_CASE(reformatting_is_no_semantic_difference) {
  // golden/default.yaml rewritten: keys in another order, comments added and removed,
  // block lists for flow lists, the seed's mode alias, quoting, `${HOME}` for `~`, a
  // path with a trailing slash and `./`, a `keep` entry another covers.
  const std::string reformatted = R"(zpolicy: 1
unavailable: deny   # refuse when bwrap is missing
process:
  env:
    set: {}
    keep:
      - PATH
      - HOME
      - USER
      - LOGNAME
      - LANG
      - LC_*
      - LC_ALL
      - TERM
      - TZ
      - SHELL
syscalls:
  action: errno
  deny:
    - process_vm_writev
    - ptrace
    - process_vm_readv
network: "none"
filesystem:
  deny: []
  protect:
    - node_modules
    - ".git"
    - "**/.git"
    - "**/.jj"
    - ./**/.hg
    - "**/.sl/"
    - .env
    - ./.env.local
    - .next
    - data/agent-sessions/
  write: ['${WORKSPACE}/']
  read:
    - /
mode: workspace_write
)";
  const auto r = diff_texts(golden("default.yaml"), reformatted);
  BOOST_TEST(r.exit_code == 0, dump(r));
  BOOST_TEST(r.differences.empty(), dump(r));

  const std::string home_spelled = edited(golden("deny-roots.yaml"), R"(deny: ["~/.ssh", "~/.aws")",
                                          R"(deny: ["${HOME}/.ssh", "${HOME}/.aws/")");
  const std::string minutes = edited(home_spelled, "timeout: 120s", "timeout: 2m");
  const auto r2 = diff_texts(golden("deny-roots.yaml"), minutes);
  BOOST_TEST(r2.differences.empty(), dump(r2));
}

BOOST_AUTO_TEST_CASE(adding_a_writable_cache_is_a_widening_with_both_lines) {
  const std::string before = golden("default.yaml");
  const std::string after = edited(before, R"(write: ["${WORKSPACE}"])",
                                   R"(write: ["${WORKSPACE}", "~/.cache"])");
  const auto r = diff_texts(before, after);
  BOOST_TEST(r.exit_code == 1);
  const Difference* d = find_path(r, "${HOME}/.cache and ", "write");
  BOOST_TEST_REQUIRE(d != nullptr, dump(r));
  BOOST_TEST(d->widening);
  BOOST_TEST(d->path_class == "writable root ${HOME}/.cache");
  BOOST_TEST(d->paths.front() == "${HOME}/.cache");
  BOOST_TEST(d->targets.size() == 2u);
  BOOST_TEST(d->before.verdict == "denied");
  BOOST_TEST(d->after.verdict == "allowed");
  // Before: readable through `read: ["/"]` (line 5) but under no writable root; after:
  // the new writable root (line 6, column of "~/.cache").
  BOOST_TEST(d->before.line.str() == "old.yaml:5:10");
  BOOST_TEST(d->after.line.str() == "new.yaml:6:27");
  // Creating entries below it widens too (the root itself stays fixed); the protected
  // paths the new root brings with it stay denied: no row holds them.
  const Difference* entries = find_path(r, "18 paths probed below ${HOME}/.cache", "create");
  BOOST_TEST_REQUIRE(entries != nullptr, dump(r));
  BOOST_TEST(has_op(*entries, "delete"));
  BOOST_TEST(r.differences.size() == 2u, dump(r));
  for (const auto& x : r.differences) {
    BOOST_TEST(x.widening, x.subject);
    for (const auto& p : x.paths) {
      BOOST_TEST(!p.starts_with("${HOME}/.cache/.git/"), p);
      BOOST_TEST(p != "${HOME}/.cache/.git", p);
    }
  }
}

BOOST_AUTO_TEST_CASE(dropping_git_from_protect_is_a_widening_with_both_lines) {
  const std::string before = golden("default.yaml");
  const std::string after = edited(before, "protect: [.git, ", "protect: [");
  const auto r = diff_texts(before, after);
  BOOST_TEST(r.exit_code == 1);
  const Difference* write = find_path(r, "${WORKSPACE}/.git and 2 paths probed below it", "write");
  BOOST_TEST_REQUIRE(write != nullptr, dump(r));
  BOOST_TEST(write->widening);
  BOOST_TEST(write->before.line.str() == "old.yaml:8:13");  // `.git` in protect
  BOOST_TEST(write->after.line.str() == "new.yaml:6:11");   // the writable root
  BOOST_TEST(write->path_class == "protected path ${WORKSPACE}/.git");
  const Difference* entries = find_path(r, "${WORKSPACE}/.git", "delete");
  BOOST_TEST_REQUIRE(entries != nullptr, dump(r));
  BOOST_TEST(entries->before.line.str() == "old.yaml:8:13");
  BOOST_TEST(r.differences.size() == 2u, dump(r));
  for (const auto& d : r.differences) BOOST_TEST(d.widening, d.subject);
}

BOOST_AUTO_TEST_CASE(network_none_to_loopback_is_a_widening_of_network_and_syscalls) {
  const std::string before = golden("default.yaml");
  const std::string after = edited(before, "network: none", "network: loopback");
  const auto r = diff_texts(before, after);
  BOOST_TEST(r.exit_code == 1);
  const Difference* net = find(r, "network", "network");
  BOOST_TEST_REQUIRE(net != nullptr, dump(r));
  BOOST_TEST(net->widening);
  BOOST_TEST(net->before.verdict == "none");
  BOOST_TEST(net->after.verdict == "loopback");
  BOOST_TEST(net->before.line.str() == "old.yaml:10:10");
  BOOST_TEST(net->after.line.str() == "new.yaml:10:10");
  // Under loopback socket() is allowed for AF_INET and AF_INET6 of a protocol the kernel
  // has built in (red team A28C-2): the row names those argument combinations.
  const Difference* inet = nullptr;
  for (const auto& d : r.differences)
    if (d.area == "syscalls" && d.subject.starts_with("socket(domain=AF_INET, type=0, protocol=0)"))
      inet = &d;
  BOOST_TEST_REQUIRE(inet != nullptr, dump(r));
  BOOST_TEST(inet->widening);
  BOOST_TEST(inet->targets.size() == 1u);  // Seatbelt has no syscall filter
  BOOST_TEST(inet->before.verdict == "errno(1)");
  BOOST_TEST(inet->after.verdict == "allow");
  BOOST_TEST(inet->before.line.str() == "old.yaml:10:10");
  BOOST_TEST(find(r, "syscalls", "connect") != nullptr, dump(r));
  BOOST_TEST(find(r, "syscalls", "sendto(dest_addr != 0)") != nullptr, dump(r));
  // AF_UNIX stays denied under loopback: no row says otherwise.
  BOOST_TEST(dump(r).find("AF_UNIX") == std::string::npos, dump(r));
}

BOOST_AUTO_TEST_CASE(allow_list_destinations_by_what_the_proxy_admits) {
  const std::string before =
      edited(golden("default.yaml"), "network: none", R"(network: {allow: [pypi.org, "*.pythonhosted.org"]})");
  // A name a wildcard admits already: no difference.
  BOOST_TEST(diff_texts(before, edited(before, "pypi.org, ", "pypi.org, files.pythonhosted.org, "))
                 .differences.empty());
  const auto added = diff_texts(before, edited(before, "pypi.org, ", "pypi.org, github.com:22, "));
  const Difference* ssh = find(added, "network", "connect github.com:22");
  BOOST_TEST_REQUIRE(ssh != nullptr, dump(added));
  BOOST_TEST(ssh->widening);
  BOOST_TEST(ssh->after.line.str() == "new.yaml:10:29");
  BOOST_TEST(added.differences.size() == 1u, dump(added));
  const auto full = diff_texts(before, edited(before, R"({allow: [pypi.org, "*.pythonhosted.org"]})", "full"));
  BOOST_TEST(find(full, "network", "network") != nullptr, dump(full));
  BOOST_TEST(full.widenings() == full.differences.size(), dump(full));
  const auto none = diff_texts(before, golden("default.yaml"));
  const Difference* pypi = find(none, "network", "connect pypi.org:443");
  BOOST_TEST_REQUIRE(pypi != nullptr, dump(none));
  BOOST_TEST(!pypi->widening);
  BOOST_TEST(pypi->before.line.str() == "old.yaml:10:19");
}

BOOST_AUTO_TEST_CASE(the_reverse_edit_is_a_narrowing) {
  const std::string wide = edited(golden("default.yaml"), "network: none", "network: full");
  const auto r = diff_texts(wide, golden("default.yaml"));
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(!r.differences.empty());
  BOOST_TEST(r.widenings() == 0u, dump(r));
}

BOOST_AUTO_TEST_CASE(environment_keep_set_and_timeout_by_meaning) {
  const std::string before = golden("large.yaml");
  // LC_ALL is kept already by LC_*: no difference.
  BOOST_TEST(diff_texts(before, edited(before, "LC_*, TERM]", "LC_*, LC_ALL, TERM]"))
                 .differences.empty());
  const auto token = diff_texts(before, edited(before, "TERM]", "TERM, GITHUB_TOKEN]"));
  const Difference* kept = find(token, "environment", "keep GITHUB_TOKEN");
  BOOST_TEST_REQUIRE(kept != nullptr, dump(token));
  BOOST_TEST(kept->widening);
  BOOST_TEST(kept->after.line.line == 69);
  const auto set = diff_texts(before, edited(before, R"(CI: "true")", R"(CI: "false")"));
  const Difference* ci = find(set, "environment", "set CI");
  BOOST_TEST_REQUIRE(ci != nullptr, dump(set));
  BOOST_TEST(ci->widening);
  BOOST_TEST(ci->before.verdict == "CI=true");
  const auto longer = diff_texts(before, edited(before, "timeout: 30m", "timeout: 2h"));
  BOOST_TEST_REQUIRE(find(longer, "timeout", "timeout") != nullptr, dump(longer));
  BOOST_TEST(find(longer, "timeout", "timeout")->widening);
  const auto shorter = diff_texts(before, edited(before, "timeout: 30m", "timeout: 10m"));
  BOOST_TEST(shorter.widenings() == 0u);
  BOOST_TEST(shorter.differences.size() == 1u);
  BOOST_TEST(diff_texts(before, edited(before, "timeout: 30m", "timeout: 1800s")).differences.empty());
}

// Single-line edits of the goldens that each widen access: each must be reported as a
// widening, and `check NEW --within OLD` must fail exactly then.
struct Edit {
  const char* golden;
  const char* from;
  const char* to;
};
const Edit kWidening[] = {
    {"default.yaml", "network: none", "network: full"},
    {"default.yaml", "mode: workspace-write", "mode: danger-full-access"},
    {"deny-roots.yaml", ", personality]", "]"},
    {"default.yaml", R"(write: ["${WORKSPACE}"])", R"(write: ["${WORKSPACE}", "/etc"])"},
    {"default.yaml", ".env, .env.local", ".env.local"},
    {"default.yaml", "TZ, SHELL", "TZ, SHELL, AWS_*"},
    {"default.yaml", "unavailable: deny", "unavailable: run-unconfined"},
    {"deny-roots.yaml", R"("~/.ssh", )", ""},
    {"deny-roots.yaml", "timeout: 120s", "timeout: 1h"},
    {"loopback.yaml", "action: kill", "action: errno"},
    {"loopback.yaml", "network: loopback", "network: full"},
    {"loopback.yaml", "network: loopback", "network: {allow: [pypi.org]}"},
    {"read-only.yaml", "mode: read-only", "mode: workspace-write"},
    {"large.yaml", R"(    - "${HOME}/secret07")" "\n", ""},
};
const Edit kNarrowing[] = {
    {"default.yaml", "deny: []", R"(deny: ["~/.ssh"])"},
    {"default.yaml", "deny: [ptrace, ", "deny: [personality, ptrace, "},
    {"loopback.yaml", "network: loopback", "network: none"},
    {"deny-roots.yaml", R"(, "${TMPDIR}")", ""},
};

BOOST_AUTO_TEST_CASE(every_widening_edit_is_reported_and_escapes_the_ceiling) {
  for (const auto& e : kWidening) {
    const std::string before = golden(e.golden);
    const std::string after = edited(before, e.from, e.to);
    const auto r = diff_texts(before, after);
    BOOST_TEST(r.widenings() > 0u, e.golden << ": " << e.from << " -> " << e.to << "\n" << dump(r));
    for (const auto& d : r.differences)
      BOOST_TEST((!d.after.line.file.empty() || !d.before.line.file.empty()), d.subject);
    const auto within = zpolicy::check_within(text(after, "new.yaml"), text(before, "old.yaml"));
    BOOST_TEST(within.exit_code == 3, e.from << " -> " << e.to);
    BOOST_TEST(within.differences.size() > 0u);
  }
}

BOOST_AUTO_TEST_CASE(a_narrowing_edit_stays_within_the_ceiling) {
  for (const auto& e : kNarrowing) {
    const std::string before = golden(e.golden);
    const std::string after = edited(before, e.from, e.to);
    const auto r = diff_texts(before, after);
    BOOST_TEST(!r.differences.empty(), e.from << " -> " << e.to);
    BOOST_TEST(r.widenings() == 0u, e.from << " -> " << e.to << "\n" << dump(r));
    const auto within = zpolicy::check_within(text(after, "new.yaml"), text(before, "old.yaml"));
    BOOST_TEST(within.exit_code == 0, e.from << " -> " << e.to << "\n"
                                             << zpolicy::render_diff(within, zpolicy::DiffFormat::Text));
    // The other way round the narrowed policy is the ceiling, and the original escapes it.
    const auto back = zpolicy::check_within(text(before, "old.yaml"), text(after, "new.yaml"));
    BOOST_TEST(back.exit_code == 3, e.from << " -> " << e.to);
  }
}

BOOST_AUTO_TEST_CASE(diff_widens_exactly_when_check_within_fails_across_the_goldens) {
  for (const char* a : kGoldens)
    for (const char* b : kGoldens) {
      const auto d = diff_texts(golden(a), golden(b));
      const auto w = zpolicy::check_within(text(golden(b), "new.yaml"), text(golden(a), "old.yaml"));
      BOOST_TEST((d.widenings() > 0) == (w.exit_code == 3), a << " -> " << b);
      BOOST_TEST((a == b) == d.differences.empty(), a << " -> " << b);
    }
}

BOOST_AUTO_TEST_CASE(an_escape_names_the_mode_and_both_lines) {
  const std::string ceiling = golden("default.yaml");
  const std::string policy = edited(ceiling, "network: none", "network: loopback");
  const auto r = zpolicy::check_within(text(policy, "project.yaml"), text(ceiling, "org.yaml"));
  BOOST_TEST(r.exit_code == 3);
  const Difference* net = find(r, "network", "network");
  BOOST_TEST_REQUIRE(net != nullptr, zpolicy::render_diff(r, zpolicy::DiffFormat::Text));
  BOOST_TEST(net->mode == "workspace-write");
  BOOST_TEST(net->before.line.str() == "org.yaml:10:10");
  BOOST_TEST(net->after.line.str() == "project.yaml:10:10");
  // read-only has no network whatever the policy says: nothing escapes there.
  for (const auto& d : r.differences) BOOST_TEST(d.mode == "workspace-write", d.subject);
  // Narrowed to read-only with --mode, the project stays within the org's ceiling.
  Request narrowed = text(policy, "project.yaml");
  narrowed.mode = "read-only";
  BOOST_TEST(zpolicy::check_within(narrowed, text(ceiling, "org.yaml")).exit_code == 0);
}

BOOST_AUTO_TEST_CASE(bad_input_is_exit_2_with_a_located_reason) {
  const auto r = diff_texts(golden("default.yaml"), "zpolicy: 1\nmode: sideways\n");
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST_REQUIRE(!r.diagnostics.empty());
  BOOST_TEST(r.diagnostics.front().file == "new.yaml");
  BOOST_TEST(r.diagnostics.front().line == 2);
  const auto w = zpolicy::check_within(text("zpolicy: 2\n", "p.yaml"), text(golden("default.yaml"), "c.yaml"));
  BOOST_TEST(w.exit_code == 2);
}

BOOST_AUTO_TEST_CASE(json_and_markdown_carry_every_difference) {
  const std::string before = golden("default.yaml");
  const auto r = diff_texts(before, edited(before, "network: none", "network: loopback"));
  const std::string json = zpolicy::render_diff(r, zpolicy::DiffFormat::Json);
  BOOST_TEST(json.starts_with(R"({"kind": "diff", "before": "old.yaml", "after": "new.yaml", "widenings": )"));
  BOOST_TEST(json.find(R"x("subject": "socket(domain=AF_INET, type=0, protocol=0), )x") !=
                 std::string::npos,
             json);
  BOOST_TEST(json.find(R"("file": "new.yaml", "line": 10, "column": 10)") != std::string::npos, json);
  const std::string md = zpolicy::render_diff(r, zpolicy::DiffFormat::Markdown);
  BOOST_TEST(md.find("|  | target | area | what | before | after |\n") != std::string::npos, md);
  size_t rows = 0;
  for (size_t at = md.find("\n| **widening**"); at != std::string::npos;
       at = md.find("\n| **widening**", at + 1))
    ++rows;
  BOOST_TEST(rows == r.differences.size(), md);
}

BOOST_AUTO_TEST_SUITE_END()
