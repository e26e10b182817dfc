#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "sandbox_fixture.hpp"

// Invariant 11, file types and links: whatever the workspace holds at a protected path
// or on its way (a FIFO, a socket, a device node, a regular file where a directory is
// needed, a `.git` pointer through a symlink, a hard link to a protected file), zpolicy
// neither hangs nor crashes, and the sandbox still cannot create, replace or change the
// protected path. Observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// Tries to replace or create every default protected path, whatever is there. (Never
// opens one for writing: a protected FIFO is still a FIFO, and opening it blocks.)
const char* kReplaceAll =
    "rm -rf .git .env .env.local data .next 2>/dev/null; mv .git g2 2>/dev/null\n"
    "mv data d2 2>/dev/null; mv .env e2 2>/dev/null; mkdir -p data/agent-sessions/x .git "
    "2>/dev/null\n"
    "touch .env .env.local 2>/dev/null; ln -sfn /tmp .git 2>/dev/null\n"
    "echo control > control.txt";

void make_fifo(const Sandbox& box, const std::string& rel) {
  BOOST_TEST_REQUIRE(mkfifo(box.ws(rel).c_str(), 0644) == 0, rel);
  BOOST_TEST_REQUIRE(lchown(box.ws(rel).c_str(), uid_of(box.caller()), uid_of(box.caller())) == 0);
}

void bind_socket_at(const Sandbox& box, const std::string& rel) {
  box.host_command({"/usr/bin/python3", "-c",
                    "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])",
                    box.ws(rel)});
}

RunResult run_with_limit(const Sandbox& box, const std::string& script,
                         const std::vector<std::string>& options = {}) {
  RunSpec spec;
  spec.options = options;
  spec.command = {"/bin/sh", "-c", script + "\necho '" + kDoneMarker + "'\n"};
  spec.limit = std::chrono::seconds(20);
  return box.run(spec);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_workspace_file_types)

// FIFOs, sockets and a device node at protected names and on a protected path's way:
// resolution opens none of them (a FIFO named .git hung zpolicy forever), and each stays
// what it was.
BOOST_DATA_TEST_CASE(special_files_at_protected_paths_neither_block_nor_open_up,
                     bdata::make(kCallers), caller) {
  struct Member {
    const char* what;
    std::function<void(const Sandbox&)> plant;
  };
  const std::vector<Member> members = {
      {".git FIFO", [](const Sandbox& b) { make_fifo(b, ".git"); }},
      {".env FIFO and .env.local FIFO",
       [](const Sandbox& b) {
         make_fifo(b, ".env");
         make_fifo(b, ".env.local");
       }},
      {"data FIFO on the way", [](const Sandbox& b) { make_fifo(b, "data"); }},
      {".git socket and .env socket",
       [](const Sandbox& b) {
         bind_socket_at(b, ".git");
         bind_socket_at(b, ".env");
       }},
      {".git and .env character devices",
       [](const Sandbox& b) {
         BOOST_TEST_REQUIRE(mknod(b.ws(".git").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
         BOOST_TEST_REQUIRE(mknod(b.ws(".env").c_str(), S_IFCHR | 0666, makedev(1, 5)) == 0);
       }},
  };
  for (const auto& m : members) {
    Sandbox box(caller);
    m.plant(box);
    const std::string before = snapshot(box.workspace());
    auto r = run_with_limit(box, kReplaceAll);
    BOOST_TEST(!r.hit_limit, m.what << ": zpolicy hung\n" << r.describe());
    BOOST_TEST(r.completed(), m.what << "\n" << r.describe());
    BOOST_TEST(read_file(box.ws("control.txt")).value_or("") == "control\n", m.what);
    unlink(box.ws("control.txt").c_str());
    BOOST_TEST(snapshot(box.workspace()) == before, m.what);
  }
}

// `data` is a regular file, or (in a policy of its own) `build` is, where the protected
// path needs a directory: the run starts (it used to fail with 125), the user's file is
// protected, and the path cannot be created by replacing the file.
BOOST_DATA_TEST_CASE(a_file_on_a_protected_paths_way_runs_and_stays, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.write_file(box.ws("data"), "user data file\n");
  box.write_file(box.ws("build"), "a build script\n");
  const std::string policy = box.write_policy("way.yaml", R"(zpolicy: 1
mode: workspace-write
filesystem:
  read: ["/"]
  write: ["${WORKSPACE}"]
  protect: [.git, data/agent-sessions, build/cache/objects]
)");
  const std::string attack =
      "rm -f data build; mv data d2; mv build b2; echo x > data; echo x > build; "
      "mkdir -p data/agent-sessions/x build/cache/objects; "
      "/usr/bin/python3 -c 'import os\n"
      "for p in (\"data\", \"build\"):\n"
      "  try: os.rename(p, p + \"3\"); print(\"renamed\", p)\n"
      "  except OSError as e: print(p, e.strerror)'";
  // The default policy protects data/agent-sessions (not build); the policy, both.
  auto r =
      run_with_limit(box, "cp build build.orig; " + attack + "; mv build.orig build; rm -f build3");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("renamed data") == std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("data")).value_or("") == "user data file\n");
  r = run_with_limit(box, attack, {"--policy", policy});
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("renamed") == std::string::npos, r.describe());
  BOOST_TEST(read_file(box.ws("data")).value_or("") == "user data file\n");
  BOOST_TEST(read_file(box.ws("build")).value_or("") == "a build script\n");
  for (const char* moved : {"d2", "b2", "data3", "build3", "build.orig"})
    BOOST_TEST(!exists(box.ws(moved)), moved);
}

// A symlink on a protected path's way: dangling or not, the run refuses cleanly (no hang,
// nothing runs); the rule would otherwise protect the link's name, not what it names.
BOOST_DATA_TEST_CASE(a_symlink_on_a_protected_paths_way_refuses, bdata::make(kCallers), caller) {
  for (const char* target : {"elsewhere", "/nonexistent-zpolicy-target", "data"}) {
    Sandbox box(caller);
    box.make_dir(box.ws("elsewhere"));
    box.host_command({"/bin/ln", "-s", target, box.ws("data")});
    const std::string marker = box.ws("MARKER");
    RunSpec spec;
    spec.command = {"/usr/bin/touch", marker};
    spec.limit = std::chrono::seconds(20);
    auto r = box.run(spec);
    BOOST_TEST(!r.hit_limit, target << "\n" << r.describe());
    BOOST_TEST(r.exit_code != 0, target << "\n" << r.describe());
    BOOST_TEST(r.err.find(box.ws("data")) != std::string::npos, r.describe());
    BOOST_TEST(!exists(marker), target << ": the command ran");
    BOOST_TEST(!exists(box.ws("elsewhere/agent-sessions")));
  }
}

// A `.git` pointer file whose gitdir is reached through a symlink inside the workspace
// (relative, absolute, or the last component) is refused: the sandbox could re-point the
// link and have the host's next git command use a directory it wrote.
BOOST_DATA_TEST_CASE(a_git_pointer_through_a_workspace_symlink_refuses, bdata::make(kCallers),
                     caller) {
  struct Member {
    std::string pointer;  // the gitdir: line's value
    std::string link, link_target;
  };
  for (int i = 0; i < 3; ++i) {
    Sandbox box(caller);
    const std::string real = box.base() + "/real-git";
    box.write_file(real + "/config", "[core]\n");
    const std::vector<Member> members = {
        {"modules/real-git", "modules", box.base()},
        {box.ws("lnk") + "/real-git", "lnk", box.base()},
        {"gd", "gd", real},
    };
    const Member& m = members[static_cast<size_t>(i)];
    box.host_command({"/bin/ln", "-s", m.link_target, box.ws(m.link)});
    box.write_file(box.ws(".git"), "gitdir: " + m.pointer + "\n");
    const std::string marker = box.ws("MARKER");
    RunSpec spec;
    spec.command = {"/usr/bin/touch", marker};
    spec.limit = std::chrono::seconds(20);
    auto r = box.run(spec);
    BOOST_TEST(r.exit_code != 0, m.pointer << "\n" << r.describe());
    BOOST_TEST(r.err.find(box.ws(m.link)) != std::string::npos, m.pointer << "\n" << r.describe());
    BOOST_TEST(!exists(marker), m.pointer << ": the command ran");
  }
}

// A gitdir through a symlink outside every writable root is host layout: it is resolved
// and the directory it names is protected (positive control for the refusal above).
BOOST_DATA_TEST_CASE(a_git_pointer_through_a_host_symlink_is_followed_and_protected,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws("modules/real/config"), "[core]\n");
  box.make_dir(box.base() + "/links");
  const std::string alias = box.base() + "/links/ws-alias";
  box.host_command({"/bin/ln", "-s", box.workspace(), alias});
  box.write_file(box.ws(".git"), "gitdir: " + alias + "/modules/real\n");
  const std::string before = snapshot(box.ws("modules/real"));
  auto r = run_with_limit(box, "echo x > modules/real/config; touch modules/real/new");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(snapshot(box.ws("modules/real")) == before);
}

// Hard links that exist before the run (git clone of a local path, cp -al, ln): the
// writable name of a protected inode is read-only too, cannot be renamed or removed; a
// hard link between two ordinary workspace files stays writable.
BOOST_DATA_TEST_CASE(pre_existing_hard_links_to_protected_files_are_read_only,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws(".git/objects/ab/cdef0123"), "blob content\n", 0444);
  box.write_file(box.ws(".env"), "SECRET=1\n", 0600);
  box.write_file(box.ws("mine.txt"), "mine\n");
  box.make_dir(box.ws("src/deep"));
  box.host_command({"/bin/ln", box.ws(".git/objects/ab/cdef0123"), box.ws("object-copy")});
  box.host_command({"/bin/ln", box.ws(".env"), box.ws("src/deep/env.bak")});
  box.host_command({"/bin/ln", box.ws("mine.txt"), box.ws("mine-too.txt")});
  const std::string git = snapshot(box.ws(".git"));
  auto r = run_with_limit(box,
                          "chmod u+w object-copy; echo evil >> object-copy; echo evil > "
                          "src/deep/env.bak\n"
                          "rm -f object-copy src/deep/env.bak; mv object-copy oc2; mv src s2; "
                          "ln object-copy oc3\n"
                          "echo more >> mine-too.txt");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(snapshot(box.ws(".git")) == git);
  BOOST_TEST(read_file(box.ws(".env")).value_or("") == "SECRET=1\n");
  BOOST_TEST(read_file(box.ws("object-copy")).value_or("") == "blob content\n");
  BOOST_TEST(read_file(box.ws("src/deep/env.bak")).value_or("") == "SECRET=1\n");
  for (const char* moved : {"oc2", "s2", "oc3"}) BOOST_TEST(!exists(box.ws(moved)), moved);
  BOOST_TEST(read_file(box.ws("mine.txt")).value_or("") == "mine\nmore\n");
}

// More aliases than zpolicy binds refuse the run with a reason, before anything runs.
BOOST_DATA_TEST_CASE(too_many_hard_link_aliases_refuse_the_run, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.make_dir(box.ws("copies"));
  box.write_file(box.ws(".git/objects/x"), "");
  box.host_command({"/bin/sh", "-c",
                    "cd .git/objects && for i in $(seq 300); do echo $i > o$i; "
                    "ln o$i ../../copies/c$i; done"});
  const std::string marker = box.ws("MARKER");
  RunSpec spec;
  spec.command = {"/usr/bin/touch", marker};
  auto r = box.run(spec);
  BOOST_TEST(r.exit_code != 0, r.describe());
  BOOST_TEST(r.err.find("share their inode with protected files") != std::string::npos,
             r.describe());
  BOOST_TEST(!exists(marker));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
