#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// Issue 14 §7: restricted read roots on a merged-/usr system. /lib64, /lib and /bin are
// symlinks into /usr; a read root that is a symlink keeps its name inside the sandbox,
// so the ELF interpreter (/lib64/ld-linux-x86-64.so.2) and #!/bin/sh scripts work, while
// what no read root names stays invisible.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_read_roots)

BOOST_DATA_TEST_CASE(symlinked_read_roots_keep_their_names, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.home() + "/outside.txt", "not a read root\n");
  const std::string policy = box.write_policy("merged-usr.yaml", R"(zpolicy: 1
mode: workspace-write
filesystem:
  read: [/usr, /lib, /lib64, /bin, /etc, "${WORKSPACE}"]
  write: ["${WORKSPACE}"]
)");
  for (const char* mode : {"workspace-write", "read-only"}) {
    RunSpec spec;
    spec.options = {"--policy", policy, "--mode", mode};
    spec.command = {"/usr/bin/git", "--version"};
    auto git = box.run(spec);
    BOOST_TEST(git.exit_code == 0, mode << "\n" << git.describe());
    BOOST_TEST(git.out.find("git version") != std::string::npos, git.describe());

    spec.command = {"/usr/bin/python3", "-c",
                    "import multiprocessing as m, os\n"
                    "m.set_start_method('fork')\n"
                    "with m.Pool(2) as p: print('sum', sum(p.map(abs, [-1, -2, 3])))\n"
                    "print(os.readlink('/lib64'), os.readlink('/bin'))\n"
                    "print('home', os.path.exists('" +
                        box.home() + "/outside.txt'))"};
    auto py = box.run(spec);
    BOOST_TEST(py.exit_code == 0, mode << "\n" << py.describe());
    BOOST_TEST(py.out.find("sum 6") != std::string::npos, py.describe());
    BOOST_TEST(py.out.find("/usr/lib64 /usr/bin") != std::string::npos, py.describe());
    BOOST_TEST(py.out.find("home False") != std::string::npos, py.describe());

    // A script started through the /bin name.
    spec.command = {"/bin/sh", "-c", "ls /lib64/ > /dev/null && echo sh-ok"};
    auto sh = box.run(spec);
    BOOST_TEST(sh.exit_code == 0, mode << "\n" << sh.describe());
    BOOST_TEST(sh.out.find("sh-ok") != std::string::npos, sh.describe());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
