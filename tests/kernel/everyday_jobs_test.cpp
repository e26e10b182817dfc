#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// Issue 14 "Done when": the quick-start default still runs everyday developer jobs
// unchanged. Each job prints "ok NAME" only when it did its work; the test names every
// job that did not, so a hardening that breaks one is seen here, not by users.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

const std::vector<std::string> kJobs{
    "make",     "cmake",   "gcc",   "g++",    "git-status", "git-diff", "venv",  "pip",
    "npm-run",  "node",    "python-fork", "tar",  "sqlite3",    "perl",     "patch", "text-tools"};

const char* kScript = R"SH(set -u
export HOME="$PWD/home" TMPDIR="$PWD/tmp"; mkdir -p "$HOME" "$TMPDIR"
ok() { echo "ok $1"; }
mkdir -p mk && printf 'all: hello\nhello: hello.c\n\t$(CC) -o $@ $<\n' > mk/Makefile &&
  printf 'int main(void){return 0;}\n' > mk/hello.c && make -s -C mk && mk/hello && ok make
mkdir -p cm && printf 'cmake_minimum_required(VERSION 3.20)\nproject(p C)\nadd_executable(p p.c)\n' > cm/CMakeLists.txt &&
  printf 'int main(void){return 0;}\n' > cm/p.c && cmake -S cm -B cm/b >/dev/null && cmake --build cm/b >/dev/null && cm/b/p && ok cmake
printf '#include <stdio.h>\nint main(void){puts("c");return 0;}\n' > c.c && gcc -O2 c.c -o c && ./c >/dev/null && ok gcc
printf '#include <vector>\nint main(){std::vector<int> v{1};return v[0]-1;}\n' > x.cpp && g++ x.cpp -o x && ./x && ok g++
git status --porcelain >/dev/null && ok git-status
git diff --stat >/dev/null && ok git-diff
python3 -m venv .venv && ok venv
python3 -c 'import zipfile
with zipfile.ZipFile("demo-1.0-py3-none-any.whl", "w") as z:
    z.writestr("demo/__init__.py", "X = 1\n")
    z.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    z.writestr("demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("demo-1.0.dist-info/RECORD", "")' &&
  .venv/bin/pip install -q --no-index demo-1.0-py3-none-any.whl && .venv/bin/python -c 'import demo' && ok pip
echo 'require("fs").writeFileSync("built.txt", "x")' > build.js &&
  printf '{"name":"p","version":"1.0.0","scripts":{"build":"node build.js"}}\n' > package.json &&
  npm --cache "$PWD/.npm-cache" --offline run -s build && test -f built.txt && ok npm-run
node -e 'require("fs").writeFileSync("n.txt", "n")' && test -f n.txt && ok node
python3 -c 'import multiprocessing as m
m.set_start_method("fork")
with m.Pool(2) as p: assert p.map(abs, [-1, -2]) == [1, 2]' && ok python-fork
mkdir -p t && echo t > t/f && tar czf t.tgz t && mkdir -p u && tar xzf t.tgz -C u && test -f u/t/f && ok tar
sqlite3 db.sqlite 'create table a(x); insert into a values (1);' && test "$(sqlite3 db.sqlite 'select x from a')" = 1 && ok sqlite3
perl -e 'open(F, ">", "p.txt") or die; print F "p"' && test -f p.txt && ok perl
printf 'a\n' > old.txt && printf 'b\n' > new.txt && diff -u old.txt new.txt > d.patch; patch -s old.txt < d.patch && grep -q b old.txt && ok patch
seq 1 100 | sort -rn | head -1 | grep -q 100 && find . -name '*.c' | xargs grep -l main | sed 's/x/y/' | awk 'END{exit NR<2}' && ok text-tools
)SH";

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_everyday_jobs)

BOOST_DATA_TEST_CASE(the_default_policy_runs_everyday_developer_jobs, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.write_file(box.ws("tracked.txt"), "v1\n");
  box.host_command({"/usr/bin/git", "init", "-q", "."});
  box.host_command(
      {"/usr/bin/git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "tracked.txt"});
  box.host_command(
      {"/usr/bin/git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"});
  RunSpec spec;
  spec.command = {"/bin/sh", "-c", std::string(kScript) + "echo '" + kDoneMarker + "'"};
  spec.limit = std::chrono::milliseconds(240000);
  auto r = box.run(spec);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  for (const auto& job : kJobs)
    BOOST_TEST(r.out.find("ok " + job + "\n") != std::string::npos, job << "\n" << r.describe());
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace zpolicy::tests::kernel
