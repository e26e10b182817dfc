#include <algorithm>
#include <boost/test/unit_test.hpp>

#include "compiler/analyzer/bwrap/verify_bwrap.hpp"
#include "verify_bwrap_fixture.hpp"

using namespace zpolicy;
using namespace zpolicy::compiler;
using test::Option;

namespace {

std::string all(const std::vector<ir::Diagnostic>& fs) {
  std::string out;
  for (const auto& f : fs) out += f.report() + "\n";
  return out;
}

std::vector<Option> without(std::vector<Option> argv, const Option& drop) {
  argv.erase(std::remove(argv.begin(), argv.end(), drop), argv.end());
  return argv;
}

std::vector<Option> replaced(std::vector<Option> argv, const Option& from, const Option& to) {
  std::replace(argv.begin(), argv.end(), from, to);
  return argv;
}

bool has(const std::vector<ir::Diagnostic>& fs, const std::string& kind, const std::string& probe) {
  return std::any_of(fs.begin(), fs.end(),
                     [&](const ir::Diagnostic& f) { return f.kind == kind && f.probe == probe; });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify_bwrap_findings)

BOOST_AUTO_TEST_CASE(the_expected_shape_verifies_clean) {
  auto fs = verify_bwrap(test::workspace_policy(), test::render(test::workspace_argv()));
  BOOST_TEST(fs.empty(), all(fs));
  auto ro = verify_bwrap(test::readonly_policy(), test::render(test::readonly_argv()));
  BOOST_TEST(ro.empty(), all(ro));
}

BOOST_AUTO_TEST_CASE(a_protected_path_bound_writable_is_a_dropped_deny_naming_its_rule) {
  const std::string env = "${WORKSPACE}/.env";
  auto fs = verify_bwrap(test::workspace_policy(),
                         test::render(replaced(test::workspace_argv(), {"--ro-bind", env, env},
                                               {"--bind", env, env})));
  BOOST_TEST_REQUIRE(fs.size() == 7u, all(fs));
  BOOST_TEST(
      fs[0].report() + "\n" ==
      "policy.yaml:6:5: error: linux: dropped-deny: write ${WORKSPACE}/.env: expected no access to "
      "the host "
      "object (under protected path ${WORKSPACE}/.env), artifact gives allowed on the host object\n"
      "    probe: protected path ${WORKSPACE}/.env\n"
      "    bwrap.args:27: --bind ${WORKSPACE}/.env ${WORKSPACE}/.env covers ${WORKSPACE}/.env\n"
      "    write succeeds\n");
  BOOST_TEST(has(fs, "dropped-deny", "write ${WORKSPACE}/.env/zpolicy-probe"));
  BOOST_TEST(has(fs, "dropped-deny", "create ${WORKSPACE}/.env/zpolicy-probe"));
  BOOST_TEST(has(fs, "dropped-deny", "delete ${WORKSPACE}/.env/zpolicy-probe/deeper"));
}

BOOST_AUTO_TEST_CASE(a_deny_mask_before_the_writable_bind_is_covered_by_it) {
  auto argv = test::workspace_argv();
  // Deny ${WORKSPACE}/secret, masked before the workspace bind that covers it.
  auto policy = test::workspace_policy();
  policy.deny.push_back(test::at("${WORKSPACE}/secret", 9, ir::HostKind::Directory));
  const Option perms{"--perms", "000"}, mask{"--tmpfs", "${WORKSPACE}/secret"},
      ro{"--remount-ro", "${WORKSPACE}/secret"};
  auto good = argv;
  good.insert(good.end() - 2, {perms, mask, ro});
  auto clean = verify_bwrap(policy, test::render(good));
  BOOST_TEST(clean.empty(), all(clean));
  auto bad = argv;
  bad.insert(bad.begin() + 14, {perms, mask, ro});
  auto fs = verify_bwrap(policy, test::render(bad));
  BOOST_TEST(has(fs, "dropped-deny", "read ${WORKSPACE}/secret"), all(fs));
  BOOST_TEST(fs.front().loc.str() == "policy.yaml:9:5");
}

BOOST_AUTO_TEST_CASE(each_missing_hardening_option_is_named) {
  const Option drops[] = {{"--new-session"},  {"--die-with-parent"},    {"--unshare-user"},
                          {"--unshare-ipc"},  {"--unshare-pid"},        {"--unshare-uts"},
                          {"--unshare-net"},  {"--unshare-cgroup-try"}, {"--cap-drop", "ALL"},
                          {"--seccomp", "3"}, {"--dev", "/dev"},        {"--proc", "/proc"},
                          {"--tmpfs", "/tmp"}};
  for (const auto& d : drops) {
    auto argv = without(test::workspace_argv(), d);
    if (d.front() == "--unshare-user") argv = without(argv, {"--disable-userns"});
    if (d.front() == "--proc") argv = without(argv, {"--remount-ro", "/proc"});
    auto fs = verify_bwrap(test::workspace_policy(), test::render(argv));
    std::string probe = d.front() == "--cap-drop"  ? "--cap-drop ALL"
                        : d.front() == "--seccomp" ? "--seccomp FD"
                        : d.size() == 2            ? d[0] + " " + d[1]
                                                   : d[0];
    BOOST_TEST_CONTEXT(probe) { BOOST_TEST(has(fs, "missing-hardening", probe), all(fs)); }
  }
}

BOOST_AUTO_TEST_CASE(network_full_needs_the_host_network) {
  auto policy = test::workspace_policy();
  policy.network = ir::Network::Full;
  auto fs = verify_bwrap(policy, test::render(test::workspace_argv()));
  BOOST_TEST_REQUIRE(fs.size() == 1u, all(fs));
  BOOST_TEST(fs[0].kind == "missing-allow");
  BOOST_TEST(fs[0].probe == "--unshare-net");
  BOOST_TEST(verify_bwrap(policy, test::render(without(test::workspace_argv(), {"--unshare-net"})))
                 .empty());
}

BOOST_AUTO_TEST_CASE(a_malformed_artifact_names_its_line) {
  auto fs = verify_bwrap(test::workspace_policy(), "--new-session\n--bind-data\n3\n/x\n");
  BOOST_TEST_REQUIRE(fs.size() == 1u);
  BOOST_TEST(fs[0].report() + "\n" ==
             "bwrap.args:2:1: error: linux: malformed-artifact: bwrap.args: expected a bwrap argv "
             "in the subset "
             "zpolicy verifies, artifact gives option '--bind-data' is outside the subset zpolicy "
             "verifies\n");
}

// bwrap takes "${A/../etc/shadow}" as the host path "/${A/../etc/shadow}", which the
// kernel resolves through its "..": the analyzer must not read it as an opaque symbolic
// root that no policy path is inside (red team dollar17, session 17). Nor "/x/${HOME}",
// which, rebased, could not be told from the root ${HOME}.
BOOST_AUTO_TEST_CASE(a_symbolic_root_whose_name_is_no_variable_is_malformed) {
  for (const char* source : {"${A/../etc/shadow}", "${..}", "/x/${HOME}"}) {
    auto argv = test::workspace_argv();
    argv.insert(argv.end() - 2, Option{"--ro-bind", source, "${WORKSPACE}/leak"});
    auto fs = verify_bwrap(test::workspace_policy(), test::render(argv));
    BOOST_TEST_REQUIRE(fs.size() == 1u, source << ": " << all(fs));
    BOOST_TEST(fs[0].kind == "malformed-artifact", source);
    BOOST_TEST(fs[0].actual.find("no name but a leading symbolic root's may start with '${'") !=
                   std::string::npos,
               fs[0].actual);
  }
}

BOOST_AUTO_TEST_CASE(a_remount_of_what_is_not_a_mount_point_aborts_bwrap) {
  auto argv = test::workspace_argv();
  std::swap(argv[20], argv[21]);  // --remount-ro before the tmpfs it remounts
  std::swap(argv[19], argv[20]);
  auto fs = verify_bwrap(test::workspace_policy(), test::render(argv));
  BOOST_TEST_REQUIRE(fs.size() == 1u, all(fs));
  BOOST_TEST(fs[0].kind == "malformed-artifact");
  BOOST_TEST(fs[0].actual.find("not a mount point") != std::string::npos, fs[0].actual);
}

// A -try bind that protects counts as missing even where the IR knows its source exists:
// the host removes it between runs (`rm -rf node_modules`), and then the plain bind aborts
// where the -try bind lets the sandbox make it (red team A29B-2).
BOOST_AUTO_TEST_CASE(a_try_bind_that_protects_counts_as_missing_whatever_the_ir_knows) {
  const std::string git = "${WORKSPACE}/.git";
  auto argv =
      replaced(test::workspace_argv(), {"--ro-bind", git, git}, {"--ro-bind-try", git, git});
  auto known = test::workspace_policy();
  known.protect[1].kind = ir::HostKind::Directory;
  for (const auto& policy : {test::workspace_policy(), known}) {
    auto fs = verify_bwrap(policy, test::render(argv));
    BOOST_TEST(has(fs, "dropped-deny", "create ${WORKSPACE}/.git"), all(fs));
    BOOST_TEST_REQUIRE(!fs.empty());
    BOOST_TEST(fs.front().trace.at(1).find("is missing, so bwrap skips it") != std::string::npos);
  }
}

// The other way: a -try bind of a deny root the host lacks now binds it once the host
// makes it (`ssh-keygen`), so it counts as applied too (red team A29B-2).
BOOST_AUTO_TEST_CASE(a_try_bind_of_a_missing_deny_root_counts_as_applied) {
  auto policy = test::workspace_policy();
  const std::string ssh = policy.deny.front().path;
  policy.deny.front().kind = ir::HostKind::Missing;
  auto argv = test::workspace_argv();
  argv.insert(argv.end() - 2, Option{"--bind-try", ssh, ssh});
  auto fs = verify_bwrap(policy, test::render(argv));
  BOOST_TEST(has(fs, "dropped-deny", "write " + ssh), all(fs));
}

BOOST_AUTO_TEST_CASE(a_plain_bind_of_a_source_known_missing_aborts_bwrap) {
  auto policy = test::workspace_policy();
  policy.protect[0].kind = ir::HostKind::Missing;  // ${WORKSPACE}/.env
  auto fs = verify_bwrap(policy, test::render(test::workspace_argv()));
  BOOST_TEST_REQUIRE(fs.size() == 1u, all(fs));
  BOOST_TEST(fs[0].report() + "\n" ==
             "bwrap.args:27:1: error: linux: malformed-artifact: bwrap.args: expected a bwrap argv "
             "in the subset "
             "zpolicy verifies, artifact gives --ro-bind ${WORKSPACE}/.env ${WORKSPACE}/.env: the "
             "source is missing "
             "on this host (per the resolved policy); bwrap would abort\n");
}

BOOST_AUTO_TEST_CASE(a_skipped_try_source_implies_its_descendants_are_missing_too) {
  const std::string pin = "${WORKSPACE}/data", sessions = "${WORKSPACE}/data/agent-sessions";
  auto argv = replaced(test::workspace_argv(), {"--bind", pin, pin}, {"--bind-try", pin, pin});
  argv = replaced(argv, {"--ro-bind", sessions, sessions}, {"--ro-bind-try", sessions, sessions});
  auto fs = verify_bwrap(test::workspace_policy(), test::render(argv));
  auto it = std::find_if(fs.begin(), fs.end(), [](const ir::Diagnostic& f) {
    return f.probe == "delete ${WORKSPACE}/data";
  });
  BOOST_TEST_REQUIRE((it != fs.end()), all(fs));
  // Skipping the pin while its descendant's bind applies is impossible, so the first
  // scenario that loses the pin has lost the protected bind as well.
  BOOST_TEST(it->trace.at(1).find("bwrap.args:24") != std::string::npos, it->trace.at(1));
  BOOST_TEST(it->trace.at(2).find("bwrap.args:33") != std::string::npos, it->trace.at(2));
}

BOOST_AUTO_TEST_CASE(too_many_uncertain_try_binds_are_refused) {
  auto argv = test::workspace_argv();
  for (int i = 0; i < 9; ++i) {
    // Outside the workspace: a -try bind at a name the sandbox may replace is refused first.
    const std::string p = "/opt/zpolicy" + std::to_string(i);
    argv.insert(argv.end() - 2, Option{"--ro-bind-try", p, p});
  }
  auto fs = verify_bwrap(test::workspace_policy(), test::render(argv));
  BOOST_TEST_REQUIRE(fs.size() == 1u, all(fs));
  BOOST_TEST(fs[0].kind == "malformed-artifact");
  BOOST_TEST(fs[0].actual.find("9 -try binds") != std::string::npos, fs[0].actual);
}

BOOST_AUTO_TEST_CASE(a_deny_root_the_host_lacks_needs_no_mask_unless_the_sandbox_can_create_it) {
  auto policy = test::workspace_policy();
  policy.deny[0].kind = ir::HostKind::Missing;  // ${HOME}/.ssh
  const Option perms{"--perms", "000"}, mask{"--tmpfs", "${HOME}/.ssh"},
      ro{"--remount-ro", "${HOME}/.ssh"};
  auto unmasked = without(without(without(test::workspace_argv(), perms), mask), ro);
  auto fs = verify_bwrap(policy, test::render(unmasked));
  BOOST_TEST(fs.empty(), all(fs));
  // Inside a writable root the sandbox could create it, and then read what it wrote.
  policy.deny.push_back(test::at("${WORKSPACE}/keys", 9, ir::HostKind::Missing));
  fs = verify_bwrap(policy, test::render(unmasked));
  BOOST_TEST(has(fs, "dropped-deny", "create ${WORKSPACE}/keys"), all(fs));
  BOOST_TEST(has(fs, "dropped-deny", "read ${WORKSPACE}/keys/zpolicy-probe"), all(fs));
}

BOOST_AUTO_TEST_CASE(danger_full_access_is_not_verified) {
  auto policy = test::workspace_policy();
  policy.mode = ir::Mode::DangerFullAccess;
  BOOST_TEST(verify_bwrap(policy, "").empty());
}

// Issue 14 §7: a read root named through a symlink (/lib64 -> usr/lib64) must keep its
// name in the sandbox, or no dynamically linked program starts.
BOOST_AUTO_TEST_CASE(a_symlinked_read_root_must_keep_its_name) {
  auto policy = test::readonly_policy();
  policy.read_links = {{"/lib64", "/usr/lib64", ir::SourceLoc{"policy.yaml", 3, 20}}};
  auto argv = test::readonly_argv();
  auto with = [&](const Option& link) {
    auto a = argv;
    a.insert(a.begin() + 13, link);  // after the readable roots
    return test::render(a);
  };
  auto clean = verify_bwrap(policy, with({"--symlink", "/usr/lib64", "/lib64"}));
  BOOST_TEST(clean.empty(), all(clean));
  auto relative = verify_bwrap(policy, with({"--symlink", "usr/lib64", "/lib64"}));
  BOOST_TEST(relative.empty(), all(relative));
  for (const std::string& text : {test::render(argv), with({"--symlink", "/etc", "/lib64"}),
                                  with({"--symlink", "/usr/lib64/missing", "/lib64"})}) {
    auto fs = verify_bwrap(policy, text);
    BOOST_TEST(has(fs, "missing-allow", "read /lib64"), all(fs));
    BOOST_TEST(!fs.empty());
    if (!fs.empty()) BOOST_TEST(fs.front().loc.str() == "policy.yaml:3:20");
  }
}

// setup18's F2 for links: bwrap makes a --symlink in the directory it looks up on each
// run, through what the host holds there then. A read link's name below a directory the
// sandbox may replace let one run's command swap `sub` for a link to `/oldroot/D`, and
// the next run of the same, verified argv made `D/lib64` on the host, outside every
// writable root (accepted before 2026-12-06 bound to a scratch workspace, and made by
// the real bwrap 0.8.0 as root). A target through such a name lets one run decide what
// the readable root's name shows the next.
BOOST_AUTO_TEST_CASE(a_link_through_a_name_the_sandbox_may_replace_is_refused) {
  const std::string w = "${WORKSPACE}";
  auto with = [](std::vector<Option> argv, const Option& after, const Option& link) {
    argv.insert(std::find(argv.begin(), argv.end(), after) + 1, link);
    return test::render(argv);
  };
  auto policy = test::workspace_policy();
  policy.read_links = {{w + "/sub/lib64", "/usr/lib64", ir::SourceLoc{"policy.yaml", 4, 12}}};
  auto name = verify_bwrap(policy, with(test::workspace_argv(), {"--bind", w, w},
                                        {"--symlink", "/usr/lib64", w + "/sub/lib64"}));
  BOOST_TEST_REQUIRE(name.size() == 1u, all(name));
  BOOST_TEST(name[0].kind == "malformed-artifact");
  BOOST_TEST(name[0].loc.str() == "bwrap.args:24:1");
  BOOST_TEST(name[0].actual.find("--symlink /usr/lib64 " + w +
                                 "/sub/lib64: its link's directory passes through " + w +
                                 "/sub, which the sandbox may create") != std::string::npos,
             all(name));

  policy.read_links = {{"/lib64", w + "/sub/lib64", ir::SourceLoc{"policy.yaml", 4, 12}}};
  auto target = verify_bwrap(policy, with(test::workspace_argv(), {"--ro-bind", "/", "/"},
                                          {"--symlink", w + "/sub/lib64", "/lib64"}));
  BOOST_TEST_REQUIRE(target.size() == 1u, all(target));
  BOOST_TEST(target[0].kind == "malformed-artifact");
  const std::string through = "--symlink " + w + "/sub/lib64 /lib64: its target passes through " +
                              w + "/sub/lib64, which the sandbox may create";
  BOOST_TEST(target[0].actual.find(through) != std::string::npos, all(target));

  // Made in the writable bind before the protected path's own, the link lands in the
  // host's protected directory, as a mount point there would.
  policy.read_links = {{w + "/.git/lib64", "/usr/lib64", ir::SourceLoc{"policy.yaml", 4, 12}}};
  auto made = verify_bwrap(policy, with(test::workspace_argv(), {"--bind", w, w},
                                        {"--symlink", "/usr/lib64", w + "/.git/lib64"}));
  BOOST_TEST(has(made, "dropped-deny", "create " + w + "/.git/lib64"), all(made));
}

// The links the emitter makes, for readable roots named through a host link, absolute or
// relative, beside a writable root, stay accepted.
BOOST_AUTO_TEST_CASE(the_emitters_read_links_are_accepted_beside_a_writable_root) {
  const std::string w = "${WORKSPACE}";
  auto policy = test::workspace_policy();
  policy.read = {test::at("/usr", 4), test::at("/etc", 4)};
  policy.read_links = {{"/bin", "/usr/bin", ir::SourceLoc{"policy.yaml", 4, 12}},
                       {"/lib64", "/usr/lib64", ir::SourceLoc{"policy.yaml", 4, 20}}};
  auto argv = test::workspace_argv();
  const auto root = std::find(argv.begin(), argv.end(), Option{"--ro-bind", "/", "/"});
  BOOST_TEST_REQUIRE((root != argv.end()));
  const auto at = argv.erase(root);
  argv.insert(at, {{"--ro-bind", "/usr", "/usr"},
                   {"--ro-bind", "/etc", "/etc"},
                   {"--symlink", "/usr/bin", "/bin"},
                   {"--symlink", "usr/lib64", "/lib64"}});
  auto fs = verify_bwrap(policy, test::render(argv));
  BOOST_TEST(fs.empty(), all(fs));
}

BOOST_AUTO_TEST_SUITE_END()

// Invariant 10: a root-started sandbox keeps kuid 0, so the host's kernel state must be
// out of reach by the mounts alone.
BOOST_AUTO_TEST_SUITE(verify_bwrap_kernel_state)

BOOST_AUTO_TEST_CASE(a_procfs_left_writable_is_missing_hardening) {
  for (const auto& [policy, argv] :
       {std::pair{test::workspace_policy(), test::workspace_argv()},
        std::pair{test::readonly_policy(), test::readonly_argv()}}) {
    auto fs = verify_bwrap(policy, test::render(without(argv, {"--remount-ro", "/proc"})));
    BOOST_TEST_REQUIRE(fs.size() == 1u, all(fs));
    BOOST_TEST(fs[0].kind == "missing-hardening");
    BOOST_TEST(fs[0].probe == "--remount-ro /proc");
  }
}

BOOST_AUTO_TEST_CASE(a_second_procfs_must_be_read_only_too) {
  auto argv = test::workspace_argv();
  argv.insert(argv.end() - 2, Option{"--proc", "${WORKSPACE}/p"});
  auto fs = verify_bwrap(test::workspace_policy(), test::render(argv));
  BOOST_TEST(has(fs, "missing-hardening", "--remount-ro ${WORKSPACE}/p"), all(fs));
  argv.insert(argv.end() - 2, Option{"--remount-ro", "${WORKSPACE}/p"});
  BOOST_TEST(!has(verify_bwrap(test::workspace_policy(), test::render(argv)), "missing-hardening",
                  "--remount-ro ${WORKSPACE}/p"));
}

BOOST_AUTO_TEST_CASE(host_proc_and_sys_writable_anywhere_are_dropped_denies) {
  struct Case {
    Option bind;
    const char* probe;
    long at = -3;  // where the bind goes, from the end; >= 0 from the start
  };
  const Case cases[] = {
      {{"--bind", "/sys", "/sys"}, "write /sys"},
      {{"--bind", "/sys/fs/cgroup", "/sys/fs/cgroup"}, "write /sys/fs/cgroup/cgroup.procs"},
      {{"--bind", "/proc/sys", "${WORKSPACE}/sysctl"}, "write /proc/sys/kernel/core_pattern"},
      {{"--bind", "/proc/sysrq-trigger", "${WORKSPACE}/sysrq"}, "write /proc/sysrq-trigger"},
      {{"--bind", "/proc/sys", "/proc/sys"}, "write /proc/sys/kernel/core_pattern"},
      // A writable bind of "/" carries /sys along with it (placed before --proc, which
      // would otherwise be no mount point for --remount-ro).
      {{"--bind", "/", "/"}, "write /sys/kernel/mm/transparent_hugepage/enabled", 11},
  };
  auto with = [](const Option& bind, long at) {
    auto argv = test::workspace_argv();
    argv.insert(at >= 0 ? argv.begin() + at : argv.end() + at, bind);
    return argv;
  };
  for (const auto& c : cases) {
    auto argv = with(c.bind, c.at);
    auto fs = verify_bwrap(test::workspace_policy(), test::render(argv));
    BOOST_TEST_CONTEXT(c.probe) { BOOST_TEST(has(fs, "dropped-deny", c.probe), all(fs)); }
    // Read-only, the same bind is harmless.
    Option ro = c.bind;
    ro[0] = "--ro-bind";
    fs = verify_bwrap(test::workspace_policy(), test::render(with(ro, c.at)));
    BOOST_TEST_CONTEXT(c.probe) { BOOST_TEST(!has(fs, "dropped-deny", c.probe), all(fs)); }
  }
}

// When the policy itself made /sys writable, the finding names that line.
BOOST_AUTO_TEST_CASE(a_writable_root_over_kernel_state_is_the_rule_named) {
  auto policy = test::workspace_policy();
  policy.write.push_back(test::at("/sys", 9, ir::HostKind::Directory));
  auto argv = test::workspace_argv();
  argv.insert(argv.begin() + 15, Option{"--bind", "/sys", "/sys"});
  auto fs = verify_bwrap(policy, test::render(argv));
  auto it = std::find_if(fs.begin(), fs.end(), [](const ir::Diagnostic& f) {
    return f.probe == "write /sys/kernel/mm/transparent_hugepage/enabled";
  });
  BOOST_TEST_REQUIRE((it != fs.end()), all(fs));
  BOOST_TEST(it->loc.str() == "policy.yaml:9:5");
  BOOST_TEST(it->trace.at(0) == "writable root /sys overlaps /sys/kernel/mm/transparent_hugepage/enabled");
}

BOOST_AUTO_TEST_SUITE_END()
