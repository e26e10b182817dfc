#include <sys/stat.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// What the sandbox must still allow: without these, every escape test could pass on a
// sandbox that simply runs nothing.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_positive_controls)

BOOST_DATA_TEST_CASE(writing_in_the_workspace_reaches_the_host, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  auto r = box.sh("printf 'written inside' > out.txt && mkdir -p sub/dir && echo deep > sub/dir/f");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("out.txt")).value_or("<missing>") == "written inside");
  BOOST_TEST(read_file(box.ws("sub/dir/f")).value_or("<missing>") == "deep\n");
  struct stat st;
  BOOST_TEST_REQUIRE(lstat(box.ws("out.txt").c_str(), &st) == 0);
  BOOST_TEST(st.st_uid == uid_of(caller));
}

BOOST_DATA_TEST_CASE(an_explicit_workspace_is_the_working_directory, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  RunSpec spec;
  spec.cwd = box.base();
  spec.options = {"--workspace", box.workspace()};
  spec.command = {"/bin/sh", "-c",
                  std::string("pwd; echo here > rel.txt; echo '") + kDoneMarker + "'"};
  auto r = box.run(spec);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find(box.workspace() + "\n") == 0, r.describe());
  BOOST_TEST(read_file(box.ws("rel.txt")).value_or("<missing>") == "here\n");
}

BOOST_DATA_TEST_CASE(git_status_works_in_a_host_repository, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws("tracked.txt"), "v1\n");
  box.host_command({"/usr/bin/git", "init", "-q", "."});
  box.host_command(
      {"/usr/bin/git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "tracked.txt"});
  box.host_command(
      {"/usr/bin/git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"});
  box.write_file(box.ws("untracked.txt"), "new\n");
  box.write_file(box.ws("tracked.txt"), "v2\n");
  auto r = box.sh("git status --porcelain && git log --format=%s");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find(" M tracked.txt") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("?? untracked.txt") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("\nc\n") != std::string::npos, r.describe());
}

BOOST_DATA_TEST_CASE(node_modules_is_readable, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws("node_modules/left-pad/index.js"), "module.exports = 42;\n");
  auto r = box.sh("cat node_modules/left-pad/index.js && ls node_modules");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("module.exports = 42;\nleft-pad\n") != std::string::npos, r.describe());
}

BOOST_DATA_TEST_CASE(a_c_compiler_builds_and_runs_a_program, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws("hello.c"),
                 "#include <stdio.h>\nint main(void) { puts(\"hello from cc\"); return 3; }\n");
  auto r = box.sh("/usr/bin/cc -O1 -o hello hello.c && ./hello; echo status=$?");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("hello from cc\nstatus=3\n") != std::string::npos, r.describe());
  struct stat st;
  BOOST_TEST_REQUIRE(stat(box.ws("hello").c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & S_IXUSR) != 0);
}

BOOST_DATA_TEST_CASE(a_python_program_runs, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  auto r = box.sh(
      "/usr/bin/python3 -c 'import json, tempfile\n"
      "with tempfile.TemporaryFile() as t: t.write(b\"x\")\n"
      "open(\"py.json\", \"w\").write(json.dumps({\"sum\": sum(range(10))}))'");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(read_file(box.ws("py.json")).value_or("<missing>") == "{\"sum\": 45}");
}

BOOST_DATA_TEST_CASE(a_shell_pipeline_runs, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  auto r = box.sh("seq 1 100 | grep 7 | sort -r | head -n 3 | tr '\\n' ,");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("97,87,79,") == 0, r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
