#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <set>
#include <sstream>

#include "sandbox_fixture.hpp"

// Invariant 2 with writable roots nested in one another (issue 19; docs/verify.md "Known
// limits" until 2026-12-06, when such policies were refused with exit 3): a protected path
// below an inner root can be neither written nor replaced, and no directory on its way up
// to the outermost root can be renamed or removed, which would carry the inner root's
// mount, and the protected path with it, out from under its rule. The directories between
// two roots are pinned, and bound before the inner root (a later recursive bind from the
// host would cover the inner root's mount). Every attempt is made from inside the real
// bwrap and must fail with EROFS, EBUSY or EACCES; the host then finds every protected
// file as it was and nothing renamed.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

struct Layout {
  std::string name;
  std::string write;                    // the policy's write list
  std::vector<std::string> dirs;        // made in the workspace before the run
  std::vector<std::string> protected_;  // protected files, made with their content
  std::vector<std::string> fixed;       // directories that must stay where they are
  std::vector<std::string> writable;    // directories where a new file must be writable
  std::string tmpdir;                   // the caller's TMPDIR, in the workspace; or none
};

// Three roots nested, a protected file at each level and a protected directory below the
// middle root.
const Layout kThreeDeep{"three-deep",
                        R"(["${WORKSPACE}", "${WORKSPACE}/a/b", "${WORKSPACE}/a/b/c/d"])",
                        {"a/b/c/d", "a/b/data/agent-sessions", "a/free"},
                        {".env", "a/b/.env", "a/b/c/d/.env", "a/b/data/agent-sessions/s.json"},
                        {"a", "a/b", "a/b/c", "a/b/c/d", "a/b/data", "a/b/data/agent-sessions"},
                        {".", "a", "a/b", "a/b/c", "a/b/c/d", "a/free"},
                        ""};

// Two sibling roots inside a third, a protected file in each.
const Layout kSiblings{"siblings",
                       R"(["${WORKSPACE}", "${WORKSPACE}/a/b", "${WORKSPACE}/a/c"])",
                       {"a/b", "a/c", "a/free"},
                       {".env", "a/b/.env", "a/c/.env"},
                       {"a", "a/b", "a/c"},
                       {".", "a", "a/b", "a/c", "a/free"},
                       ""};

// `${TMPDIR}` inside the workspace: symbolic roots that nest once bound (golden/deny-roots
// writes both; refused with exit 3 before 2026-12-06 when TMPDIR lay in the workspace).
const Layout kTmpdirInside{"tmpdir-inside",
                           R"(["${WORKSPACE}", "${TMPDIR}"])",
                           {"t/tmp", "a/free"},
                           {".env", "t/tmp/.env"},
                           {"t", "t/tmp"},
                           {".", "t", "t/tmp", "a/free"},
                           "t/tmp"};

std::string policy_of(const Layout& l) {
  return "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  read: [\"/\"]\n  write: " + l.write +
         "\n  protect: [.env, data/agent-sessions]\nnetwork: none\n";
}

std::string py_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (const auto& s : v) out += "\"" + s + "\", ";
  return out + "]";
}

// One line per attempt, `ATTEMPT <what> <path> -> <errno name or ok>`; then the controls.
std::string script_of(const Layout& l) {
  return "/usr/bin/python3 -c 'import os, errno\n"
         "def t(what, path, f):\n"
         "  try: f(); print(\"ATTEMPT\", what, path, \"-> ok\")\n"
         "  except OSError as e: print(\"ATTEMPT\", what, path, \"->\", errno.errorcode[e.errno])\n"
         "def remove(p):\n"
         "  try: (os.rmdir if os.path.isdir(p) and not os.path.islink(p) else os.unlink)(p)\n"
         "  except FileNotFoundError: pass\n"
         "def replace_by(path, make):\n"
         "  tmp = os.path.join(os.path.dirname(path), \".zp-replacement\")\n"
         "  make(tmp)\n"
         "  try: os.rename(tmp, path)\n"
         "  finally: remove(tmp)\n"
         "def write_new(p): open(p, \"w\").write(\"replaced\\n\")\n"
         "for p in " +
         py_list(l.protected_) +
         ":\n"
         "  t(\"append\", p, lambda: open(p, \"a\").write(\"x\\n\"))\n"
         "  t(\"truncate\", p, lambda: open(p, \"w\").close())\n"
         "  t(\"chmod\", p, lambda: os.chmod(p, 0o700))\n"
         "  t(\"unlink\", p, lambda: os.unlink(p))\n"
         "  t(\"rename\", p, lambda: os.rename(p, p + \"-moved\"))\n"
         "  t(\"symlink-over\", p, lambda: replace_by(p, lambda q: os.symlink(\"/etc/hostname\", "
         "q)))\n"
         "  t(\"file-over\", p, lambda: replace_by(p, write_new))\n"
         "for d in " +
         py_list(l.fixed) +
         ":\n"
         "  t(\"rename\", d, lambda: os.rename(d, d + \"-moved\"))\n"
         "  t(\"rmdir\", d, lambda: os.rmdir(d))\n"
         "  t(\"dir-over\", d, lambda: replace_by(d, os.mkdir))\n"
         "'\n"
         "for d in " +
         [&] {
           std::string s;
           for (const auto& d : l.writable) s += d + " ";
           return s;
         }() +
         "; do echo control > $d/control.txt; done\n"
         "mkdir a/free/x && mv a/free/x a/free/y && echo renamed-free\n";
}

void run_layout(Caller caller, const Layout& l) {
  Sandbox box(caller);
  for (const auto& d : l.dirs) box.make_dir(box.ws(d));
  for (const auto& p : l.protected_) box.write_file(box.ws(p), "SECRET " + p + "\n");
  const std::string policy = box.write_policy(l.name + ".yaml", policy_of(l));

  RunSpec spec;
  spec.options = {"--policy", policy};
  spec.command = {"/bin/sh", "-c", script_of(l) + "\necho '" + kDoneMarker + "'\n"};
  if (!l.tmpdir.empty()) spec.extra_env = {"TMPDIR=" + box.ws(l.tmpdir)};
  auto r = box.run(spec);
  BOOST_TEST_REQUIRE(r.completed(), l.name << "\n" << r.describe());

  const std::set<std::string> refusals{"EROFS", "EBUSY", "EACCES"};
  size_t attempts = 0;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);) {
    if (!line.starts_with("ATTEMPT ")) continue;
    ++attempts;
    const std::string result = line.substr(line.rfind("-> ") + 3);
    BOOST_TEST(refusals.contains(result), l.name << ": " << line);
  }
  BOOST_TEST(attempts == 7 * l.protected_.size() + 3 * l.fixed.size(), r.describe());

  for (const auto& p : l.protected_) {
    BOOST_TEST(read_file(box.ws(p)).value_or("<missing>") == "SECRET " + p + "\n",
               l.name << ": " << p);
    BOOST_TEST(!exists(box.ws(p + "-moved")), p);
  }
  for (const auto& d : l.fixed) {
    BOOST_TEST(exists(box.ws(d)), l.name << ": " << d);
    BOOST_TEST(!exists(box.ws(d + "-moved")), l.name << ": " << d);
  }
  const std::string after = snapshot(box.workspace());
  BOOST_TEST(after.find(".zp-replacement") == std::string::npos, after);
  // Positive controls: every root and pinned directory is still writable, and a plain
  // directory beside the pins can be renamed.
  for (const auto& d : l.writable)
    BOOST_TEST(read_file(box.ws(d + "/control.txt")).value_or("<missing>") == "control\n",
               l.name << ": " << d);
  BOOST_TEST(r.out.find("renamed-free") != std::string::npos, r.describe());
  BOOST_TEST(exists(box.ws("a/free/y")));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_nested_roots)

BOOST_DATA_TEST_CASE(three_nested_roots_keep_each_protected_path_in_place, bdata::make(kCallers),
                     caller) {
  run_layout(caller, kThreeDeep);
}

BOOST_DATA_TEST_CASE(sibling_roots_inside_a_root_keep_their_protected_paths_in_place,
                     bdata::make(kCallers), caller) {
  run_layout(caller, kSiblings);
}

BOOST_DATA_TEST_CASE(a_tmpdir_inside_the_workspace_keeps_its_protected_paths_in_place,
                     bdata::make(kCallers), caller) {
  run_layout(caller, kTmpdirInside);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
