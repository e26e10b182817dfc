#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <fstream>
#include <optional>

#include "sandbox_fixture.hpp"

// Invariant 10: nothing under /proc or /sys opens for writing inside the sandbox, even
// when root started it (its kuid stays 0, and sysctl, sysrq and sysfs files check only
// the owner). The walk only opens and closes, never writes; the host then checks that a
// real write attempt left the kernel's state as it was.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// Walks each root without following symlinks and tries open(O_WRONLY) on every regular
// file: "writable PATH" for each that opens (closed at once, nothing written), then
// "checked N UNDER-PROC-SYS". /proc/<pid> directories are skipped but for the walker's
// own, which is passed as a root.
const char* kWalker = R"(import os, stat, sys
opened, checked, sysctl = [], 0, 0
flags = os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
def visit(path, depth):
    global checked, sysctl
    try:
        st = os.lstat(path)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode):
        if depth > 24:
            return
        try:
            names = sorted(os.listdir(path))
        except OSError:
            return
        for n in names:
            if path == "/proc" and n.isdigit():
                continue
            visit(os.path.join(path, n), depth + 1)
    elif stat.S_ISREG(st.st_mode):
        checked += 1
        sysctl += path.startswith("/proc/sys/")
        try:
            fd = os.open(path, flags)
        except OSError:
            return
        os.close(fd)
        opened.append(path)
for root in sys.argv[1:] + ["/proc/%d" % os.getpid()]:
    visit(root, 0)
for p in opened:
    print("writable", p)
print("checked", checked, sysctl, flush=True)
)";

void expect_no_writable_kernel_file(Caller caller, const std::vector<std::string>& options,
                                    const std::string& policy_yaml = "") {
  Sandbox box(caller);
  std::vector<std::string> opts = options;
  if (!policy_yaml.empty()) {
    opts.insert(opts.begin(), box.write_policy("policy.yaml", policy_yaml));
    opts.insert(opts.begin(), "--policy");
  }
  const std::string walker = box.base() + "/walk.py";
  box.write_file(walker, kWalker);
  auto r = box.sh("/usr/bin/python3 " + walker + " /proc /sys", opts);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("writable ") == std::string::npos, r.out.substr(0, 4000));
  // The walk saw the sysctls at all: a walker that found nothing would pass vacuously.
  unsigned long checked = 0, sysctl = 0;
  const auto at = r.out.find("checked ");
  BOOST_TEST_REQUIRE(at != std::string::npos, r.describe());
  std::sscanf(r.out.c_str() + at, "checked %lu %lu", &checked, &sysctl);
  BOOST_TEST(sysctl > 100u, r.describe());
  BOOST_TEST(checked > sysctl, r.describe());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_host_state)

BOOST_DATA_TEST_CASE(nothing_under_proc_or_sys_opens_for_writing, bdata::make(kCallers), caller) {
  expect_no_writable_kernel_file(caller, {});
}

BOOST_DATA_TEST_CASE(nothing_under_proc_or_sys_opens_for_writing_in_read_only_mode,
                     bdata::make(kCallers), caller) {
  expect_no_writable_kernel_file(caller, {"--mode", "read-only"});
}

// /sys masked by a deny root, and a loopback network (the sandbox's own net sysctls,
// which the sandbox's root owns): /proc is still read-only as a whole.
BOOST_DATA_TEST_CASE(nothing_under_proc_opens_for_writing_with_loopback_and_sys_denied,
                     bdata::make(kCallers), caller) {
  expect_no_writable_kernel_file(caller, {}, R"(zpolicy: 1
mode: workspace-write
filesystem:
  write: ["${WORKSPACE}"]
  deny: [/sys]
network: loopback
)");
}

// The write itself, observed from the host: kernel.core_pattern (host root code execution
// on the next crash) and vm.swappiness keep their values. Should the sandbox get through,
// the test puts the old values back before it fails.
BOOST_DATA_TEST_CASE(sysctl_writes_do_not_reach_the_host, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string token = unique_token();
  struct Sysctl {
    std::string path, attempt;
    std::optional<std::string> before;
  };
  std::vector<Sysctl> sysctls = {{"/proc/sys/kernel/core_pattern", "|/bin/false zpolicy-kt-" + token, {}},
                                 {"/proc/sys/vm/swappiness", "17", {}},
                                 {"/proc/sys/kernel/randomize_va_space", "0", {}}};
  std::string script;
  for (auto& s : sysctls) {
    s.before = read_file(s.path);
    BOOST_TEST_REQUIRE(s.before.has_value(), s.path);
    script += "printf '%s\\n' '" + s.attempt + "' > " + s.path + " && echo wrote " + s.path + "\n";
  }
  auto r = box.sh(script);
  for (auto& s : sysctls) {
    const auto after = read_file(s.path);
    if (after != s.before) std::ofstream(s.path) << *s.before;
    BOOST_TEST((after == s.before), s.path << " changed on the host to " << after.value_or("?"));
  }
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("wrote ") == std::string::npos, r.describe());
  // For root the read-only mount is what refuses (nobody is refused by the files' modes
  // first): the proof that the mount, not luck with permissions, holds.
  if (caller == Caller::Root)
    BOOST_TEST(r.err.find("Read-only file system") != std::string::npos, r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
