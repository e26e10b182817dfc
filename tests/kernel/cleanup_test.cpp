#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sandbox_fixture.hpp"

// `zpolicy cleanup [DIR]` (docs/run.md "Cleanup"): the placeholders a killed run left are
// removed, but never one a live run relies on, never a directory a command put something
// in, and never anything reached through a symlink. Observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace {

// Says it is up, then waits for the host to release it.
std::vector<std::string> held_command(const std::string& name) {
  return {"/bin/sh", "-c",
          "touch up-" + name + "; while [ ! -e release-" + name +
              " ]; do sleep 0.05; done; echo '" + kDoneMarker + "'" + this_suites_mark()};
}

struct Cleaned {
  int exit_code = -1;
  std::string out;
};

// `zpolicy cleanup DIR` as the box's caller, on the host.
Cleaned cleanup_as_caller(const Sandbox& box, const std::string& dir) {
  auto r = box.host_command({"/bin/sh", "-c", "\"$0\" cleanup \"$1\"; echo \"exit=$?\"",
                             zpolicy_binary(), dir});
  const auto at = r.out.rfind("exit=");
  // Without the shell's own report, what the fixture saw is the message.
  if (at == std::string::npos) return {-1, r.describe()};
  return {std::stoi(r.out.substr(at + 5)), r.out.substr(0, at) + r.err};
}

// Other zpolicy runs on this host (any user's) keep cleanup from acting: wait for a quiet
// moment rather than fail because of them.
Cleaned cleanup_when_quiet(const Sandbox& box, const std::string& dir) {
  Cleaned c;
  wait_until(
      [&] {
        c = cleanup_as_caller(box, dir);
        return c.exit_code != 1;
      },
      std::chrono::seconds(60));
  return c;
}

// cleanup_when_quiet, once the dead run's record shows (cleanup_once_dead_runs_show says
// why it may not yet): a cleanup that found no record at all is asked again.
Cleaned cleanup_once_dead(const Sandbox& box, const std::string& dir) {
  Cleaned c;
  wait_until(
      [&] {
        c = cleanup_as_caller(box, dir);
        return c.exit_code != 1 && c.out != "no placeholders left by runs\n";
      },
      std::chrono::seconds(10));
  return c;
}

// A killed run's record stays live (locked) until the last of its processes has gone
// after the kill, a moment after its command: until then cleanup lists none of its
// placeholders as left. Cleanup under a live run removes nothing, so asking again is safe.
Cleaned cleanup_once_dead_runs_show(const Sandbox& box, const std::string& dir) {
  Cleaned c;
  wait_until(
      [&] {
        c = cleanup_as_caller(box, dir);
        return c.out.find("left    ") != std::string::npos;
      },
      std::chrono::seconds(5));
  return c;
}

// The next run reconciles dead records only when it is alone on the host: other tests'
// runs may be live, so run `true` until the killed run's `.env.local` is gone. False when
// it never was.
bool reconciled_by_a_later_run(const Sandbox& box) {
  RunSpec spec;
  spec.command = {"/bin/true"};
  return wait_until(
      [&] {
        box.run(spec);
        return !exists(box.ws(".env.local"));
      },
      std::chrono::seconds(60));
}

Running start_held_run(const Sandbox& box, const std::string& name) {
  RunSpec spec;
  spec.command = held_command(name);
  Running r = box.start(spec);
  BOOST_TEST_REQUIRE(
      wait_until([&] { return exists(box.ws("up-" + name)); }, std::chrono::seconds(15)));
  return r;
}

void kill_run(const Sandbox& box, Running& r, const std::string& name) {
  kill(r.pid, SIGKILL);
  RunResult res = box.finish(r);
  BOOST_TEST(res.exit_code == 128 + SIGKILL, res.describe());
  BOOST_TEST(wait_until([&] { return processes_with_argv(held_command(name)).empty(); },
                        std::chrono::seconds(5)));
}

// zpolicy's state directory for a caller (compiler/resolve/state_dir.hpp).
std::string state_dir_of(Caller caller) {
  return caller == Caller::Root ? "/run/zpolicy" : "/tmp/zpolicy-65534";
}

// Rewrites each line of the caller's run records that ends in " PATH" with `edit`, which
// gets the words before the path and returns the line's new words. The record format is
// zpolicy's own (runner/run_records.hpp). Returns how many lines changed.
template <typename Edit>
int rewrite_records(Caller caller, const std::string& path, Edit edit) {
  const std::string dir = state_dir_of(caller);
  int changed = 0;
  DIR* d = opendir(dir.c_str());
  if (!d) return 0;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("run-", 0) != 0) continue;
    std::string text, out;
    if (auto t = read_file(dir + "/" + name)) text = *t;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (line.size() > path.size() && line.ends_with(" " + path)) {
        std::istringstream stream(line.substr(0, line.size() - path.size() - 1));
        std::vector<std::string> words;
        for (std::string w; stream >> w;) words.push_back(w);
        std::string rewritten;
        for (const auto& w : edit(words)) rewritten += w + " ";
        if (rewritten + path != line) ++changed;
        line = rewritten + path;
      }
      out += line + "\n";
    }
    if (out != text) std::ofstream(dir + "/" + name, std::ios::trunc) << out;
  }
  closedir(d);
  return changed;
}

// Makes the lines that name `path` with the inode number `was` name `now` instead: what
// they say when ext4 hands a freed inode number out again, as it does at once in a quiet
// directory. Only the inode number's word is touched.
int renumber_records(Caller caller, const std::string& path, ino_t was, ino_t now) {
  return rewrite_records(caller, path, [&](std::vector<std::string> words) {
    for (auto& w : words)
      if (w == std::to_string(was)) w = std::to_string(now);
    return words;
  });
}

// Makes the lines that name `path` lines of format 1 ("DEV INO PATH"), as a run before
// 2026-12-05 wrote them: no birth time.
int write_as_format_1(Caller caller, const std::string& path) {
  return rewrite_records(caller, path, [](std::vector<std::string> words) {
    if (words.size() >= 3 && words[0] == "v2") return std::vector<std::string>{words[1], words[2]};
    return words;
  });
}

// A dead run's record names its placeholders by device and inode number, and ext4 hands a
// freed inode number out again at once: the user removes `.env` (the killed run's empty
// placeholder), makes a directory of their own there, read-only, and it gets the same
// number. Reconciling the record, by the next run or by `zpolicy cleanup`, must neither
// chmod nor remove that directory; the run's other placeholders go as before.
void a_directory_made_since_is_not_a_dead_runs_placeholder(Caller caller, bool by_cleanup) {
  Sandbox box(caller);
  Running a = start_held_run(box, "a");
  kill_run(box, a, "a");
  struct stat placeholder {};
  BOOST_TEST_REQUIRE(lstat(box.ws(".env").c_str(), &placeholder) == 0,
                     ".env: the killed run made no placeholder");
  box.host_command({"/bin/sh", "-c", "rmdir .env && mkdir -m 0555 .env"});
  struct stat mine {};
  BOOST_TEST_REQUIRE(lstat(box.ws(".env").c_str(), &mine) == 0);
  if (mine.st_ino == placeholder.st_ino)
    BOOST_TEST_MESSAGE("ext4 gave the user's .env the placeholder's inode number itself");
  else
    BOOST_TEST_REQUIRE(renumber_records(caller, box.ws(".env"), placeholder.st_ino, mine.st_ino) ==
                       1);

  if (by_cleanup) {
    // Once the killed run's record shows as dead: its last process may outlive the kill a
    // moment, longer on a loaded machine.
    const auto c = cleanup_once_dead(box, box.workspace());
    BOOST_TEST(c.exit_code == 0, c.out);
    BOOST_TEST(c.out.find("kept    " + box.ws(".env") + ": ") != std::string::npos, c.out);
  } else {
    BOOST_TEST(reconciled_by_a_later_run(box));
  }
  struct stat after {};
  BOOST_TEST_REQUIRE(lstat(box.ws(".env").c_str(), &after) == 0,
                     "the user's own .env was removed as the dead run's placeholder");
  BOOST_TEST((after.st_mode & 07777) == 0555u,
             "its mode was changed to " << std::oct << (after.st_mode & 07777));
  BOOST_TEST(!exists(box.ws(".env.local")));
  BOOST_TEST(!exists(box.ws("data")));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_cleanup)

// A killed run leaves its placeholders; cleanup removes the empty ones it made, keeps one
// a command put a file in, and acts on nothing reached through a symlink planted since.
BOOST_DATA_TEST_CASE(cleanup_removes_only_a_dead_runs_empty_placeholders, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
  Running a = start_held_run(box, "a");
  kill_run(box, a, "a");
  for (const char* p : {".env", ".env.local", ".next", "data/agent-sessions"})
    BOOST_TEST_REQUIRE(exists(box.ws(p)), p << ": the killed run made no placeholder");
  box.write_file(box.ws(".next/kept"), "user data\n");
  // `data` moved away and a symlink in its place: `data/agent-sessions` now resolves to
  // the very directory the run made, which cleanup must still not reach.
  box.host_command({"/bin/mv", box.ws("data"), box.ws("data-moved")});
  box.host_command({"/bin/ln", "-s", "data-moved", box.ws("data")});

  const auto c = cleanup_once_dead(box, box.workspace());
  BOOST_TEST(c.exit_code == 0, c.out);
  BOOST_TEST(!exists(box.ws(".env")));
  BOOST_TEST(!exists(box.ws(".env.local")));
  BOOST_TEST(read_file(box.ws(".next/kept")).value_or("") == "user data\n");
  BOOST_TEST(exists(box.ws("data-moved/agent-sessions")));
  BOOST_TEST(exists(box.ws("data")));
  BOOST_TEST(c.out.find("removed " + box.ws(".env") + "\n") != std::string::npos, c.out);
  BOOST_TEST(c.out.find("kept    " + box.ws(".next") + ": not empty") != std::string::npos, c.out);
  BOOST_TEST(c.out.find("kept    " + box.ws("data/agent-sessions") + ": cannot be reached") !=
                 std::string::npos,
             c.out);
  // The record is gone with them: a second cleanup finds nothing.
  const auto again = cleanup_when_quiet(box, box.workspace());
  BOOST_TEST(again.exit_code == 0);
  BOOST_TEST(again.out == "no placeholders left by runs\n");
}

// While a run is live, cleanup removes nothing, even the placeholders of a run killed
// beside it; once the live run is gone they go.
BOOST_DATA_TEST_CASE(cleanup_touches_nothing_while_a_run_is_live, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  Running a = start_held_run(box, "a");
  Running b = start_held_run(box, "b");
  kill_run(box, a, "a");
  const auto busy = cleanup_once_dead_runs_show(box, box.workspace());
  BOOST_TEST(busy.exit_code == 1, "exit " << busy.exit_code << ": " << busy.out);
  BOOST_TEST(busy.out.find("left    " + box.ws(".env") + ": cleanup acts only while no run is live") != std::string::npos,
             busy.out);
  for (const char* p : {".env", ".env.local", ".next", "data/agent-sessions"})
    BOOST_TEST(exists(box.ws(p)), p << " removed under a live run");
  // The live run still keeps its protected paths uncreatable.
  box.write_file(box.ws("release-b"), "");
  RunResult rb = box.finish(b);
  BOOST_TEST(rb.completed(), rb.describe());
  const auto done = cleanup_when_quiet(box, box.workspace());
  BOOST_TEST(done.exit_code == 0, done.out);
  for (const char* p : {".env", ".env.local", ".next", "data"})
    BOOST_TEST(!exists(box.ws(p)), p << " left behind");
}

// A dead run's record that names no placeholder (a run that made none and ended beside a
// live one leaves it so) is removed by the next run that finds the host quiet, as one
// with placeholders is: records left behind are read by every later run.
BOOST_DATA_TEST_CASE(a_dead_runs_empty_record_is_removed_by_the_next_run, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  RunSpec spec;
  spec.command = {"/bin/true"};
  BOOST_TEST_REQUIRE(box.run(spec).exit_code == 0);  // makes the caller's state directory
  const std::string record = state_dir_of(caller) + "/run-999999999-1";
  box.write_file(record, "");
  BOOST_TEST_REQUIRE(chmod(record.c_str(), 0600) == 0);
  if (caller != Caller::Root) BOOST_TEST_REQUIRE(chown(record.c_str(), 65534, 65534) == 0);
  BOOST_TEST(wait_until(
      [&] {
        box.run(spec);
        return !exists(record);
      },
      std::chrono::seconds(60)));
  unlink(record.c_str());
}

BOOST_DATA_TEST_CASE(cleanup_keeps_a_directory_made_since_at_a_dead_runs_placeholder,
                     bdata::make(kCallers), caller) {
  a_directory_made_since_is_not_a_dead_runs_placeholder(caller, true);
}

BOOST_DATA_TEST_CASE(the_next_run_keeps_a_directory_made_since_at_a_dead_runs_placeholder,
                     bdata::make(kCallers), caller) {
  a_directory_made_since_is_not_a_dead_runs_placeholder(caller, false);
}

// A dead run's placeholder without a birth time (a record from before 2026-12-05, or a
// filesystem that reports none) cannot be told from a directory made there since: the next
// run neither chmods nor removes it and keeps it in its record, and `zpolicy cleanup` names
// it to the user, once.
BOOST_DATA_TEST_CASE(a_placeholder_without_a_birth_time_is_kept_and_named, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  Running a = start_held_run(box, "a");
  kill_run(box, a, "a");
  BOOST_TEST_REQUIRE(write_as_format_1(caller, box.ws(".env")) == 1);
  BOOST_TEST(reconciled_by_a_later_run(box));
  BOOST_TEST(exists(box.ws(".env")), ".env removed without a birth time to identify it");
  const auto c = cleanup_when_quiet(box, box.workspace());
  BOOST_TEST(c.exit_code == 0, c.out);
  BOOST_TEST(c.out.find("kept    " + box.ws(".env") +
                        ": cannot be told from a directory made "
                        "there since the run") != std::string::npos,
             c.out);
  BOOST_TEST(exists(box.ws(".env")));
  const auto again = cleanup_when_quiet(box, box.workspace());
  BOOST_TEST(again.out == "no placeholders left by runs\n", again.out);
  box.host_command({"/bin/rmdir", box.ws(".env")});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
