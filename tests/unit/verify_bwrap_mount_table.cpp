#include <boost/test/unit_test.hpp>

#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/bwrap/mount_table.hpp"

using namespace zpolicy::compiler;

namespace {

// One option per line of `spec`, arguments separated by spaces, as bwrap.args holds them.
std::string args(std::initializer_list<const char*> options) {
  std::string out;
  for (const char* o : options) {
    std::string s = o;
    for (char& c : s)
      if (c == ' ') c = '\n';
    out += s + "\n";
  }
  return out;
}

MountTable replay(const std::string& text, bool apply_try = true) {
  auto parsed = parse_bwrap_args(text);
  BOOST_TEST_REQUIRE(parsed.has_value(), parsed.error().message);
  auto r = MountTable::replay(*parsed, [&](size_t) { return apply_try; });
  BOOST_TEST_REQUIRE(r.has_value(), r.error().message);
  return std::move(*r);
}

SymbolicPath P(const char* s) { return *SymbolicPath::parse(s); }

Outcome at(MountTable& t, const char* path, FsOp op) { return t.access(P(path), op).outcome; }

std::string trace(MountTable& t, const char* path, FsOp op) {
  std::string out;
  for (const auto& l : t.access(P(path), op).trace) out += l + "\n";
  return out;
}

bool mentions(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify_bwrap_mount_table)

BOOST_AUTO_TEST_CASE(a_later_mount_covers_earlier_ones_at_or_below_it) {
  auto protect_first = replay(args({"--ro-bind / /", "--ro-bind /w/.git /w/.git", "--bind /w /w"}));
  BOOST_TEST((at(protect_first, "/w/.git/config", FsOp::Write) == Outcome::Host));
  BOOST_TEST(mentions(trace(protect_first, "/w/.git/config", FsOp::Write),
                      "bwrap.args:7: --bind /w /w covers"));
  auto protect_last = replay(args({"--ro-bind / /", "--bind /w /w", "--ro-bind /w/.git /w/.git"}));
  BOOST_TEST((at(protect_last, "/w/.git/config", FsOp::Write) == Outcome::Denied));
  BOOST_TEST(mentions(trace(protect_last, "/w/.git/config", FsOp::Write), "EROFS"));
  BOOST_TEST((at(protect_last, "/w/.gitx", FsOp::Write) == Outcome::Host));
  BOOST_TEST((at(protect_last, "/etc/passwd", FsOp::Read) == Outcome::Host));
  BOOST_TEST((at(protect_last, "/etc/passwd", FsOp::Write) == Outcome::Denied));
}

BOOST_AUTO_TEST_CASE(mount_points_cannot_be_created_removed_or_renamed) {
  auto t = replay(
      args({"--ro-bind / /", "--bind /w /w", "--bind /w/data /w/data", "--ro-bind /w/a/b /w/a/b"}));
  BOOST_TEST((at(t, "/w/data", FsOp::Delete) == Outcome::Denied));
  BOOST_TEST(mentions(trace(t, "/w/data", FsOp::Delete), "EBUSY"));
  BOOST_TEST((at(t, "/w/data", FsOp::Create) == Outcome::Denied));
  BOOST_TEST((at(t, "/w/data", FsOp::Write) == Outcome::Host));
  BOOST_TEST((at(t, "/w/datax", FsOp::Delete) == Outcome::Host));
  // A directory that merely holds a mount point can be renamed; the mount moves along.
  BOOST_TEST((at(t, "/w/a", FsOp::Delete) == Outcome::Host));
  BOOST_TEST((at(t, "/w", FsOp::Delete) == Outcome::Denied));
}

BOOST_AUTO_TEST_CASE(a_tmpfs_mask_holds_only_when_mode_000_and_read_only) {
  auto masked =
      replay(args({"--ro-bind / /", "--perms 000", "--tmpfs /h/.ssh", "--remount-ro /h/.ssh"}));
  for (FsOp op : kAllFsOps) {
    BOOST_TEST((at(masked, "/h/.ssh", op) == Outcome::Denied));
    BOOST_TEST((at(masked, "/h/.ssh/id_ed25519", op) == Outcome::Denied));
  }
  BOOST_TEST(mentions(trace(masked, "/h/.ssh/id_ed25519", FsOp::Read), "no search permission"));
  BOOST_TEST((at(masked, "/h/.sshx", FsOp::Read) == Outcome::Host));
  // The sandbox owns the tmpfs: on a writable one it can chmod the mode open.
  auto writable = replay(args({"--ro-bind / /", "--perms 000", "--tmpfs /h/.ssh"}));
  BOOST_TEST((at(writable, "/h/.ssh", FsOp::Read) == Outcome::Scratch));
  BOOST_TEST((at(writable, "/h/.ssh/new", FsOp::Create) == Outcome::Scratch));
  auto listable = replay(args({"--ro-bind / /", "--tmpfs /h/.ssh", "--remount-ro /h/.ssh"}));
  BOOST_TEST((at(listable, "/h/.ssh", FsOp::Read) == Outcome::Scratch));
  BOOST_TEST((at(listable, "/h/.ssh/id_ed25519", FsOp::Read) == Outcome::Denied));
  BOOST_TEST((at(listable, "/h/.ssh/new", FsOp::Create) == Outcome::Denied));
}

BOOST_AUTO_TEST_CASE(a_device_bound_over_a_file_shows_nothing_of_it) {
  auto t = replay(args({"--ro-bind / /", "--ro-bind /dev/null /h/.aws/credentials"}));
  BOOST_TEST((at(t, "/h/.aws/credentials", FsOp::Read) == Outcome::Denied));
  BOOST_TEST(mentions(trace(t, "/h/.aws/credentials", FsOp::Read), "nodev"));
  BOOST_TEST((at(t, "/h/.aws/credentials", FsOp::Write) == Outcome::Denied));
  BOOST_TEST((at(t, "/h/.aws/credentials", FsOp::Delete) == Outcome::Denied));
  BOOST_TEST((at(t, "/h/.aws/credentials/x", FsOp::Read) == Outcome::Denied));
  BOOST_TEST(mentions(trace(t, "/h/.aws/credentials/x", FsOp::Read), "ENOTDIR"));
  auto dev = replay(args({"--ro-bind / /", "--dev-bind /dev/null /h/.aws/credentials"}));
  BOOST_TEST((dev.host_access(P("/h/.aws/credentials"), FsOp::Read).outcome == Outcome::Scratch));
  auto other = replay(args({"--ro-bind / /", "--ro-bind /etc/hosts /h/.aws/credentials"}));
  auto r = other.host_access(P("/h/.aws/credentials"), FsOp::Read);
  BOOST_TEST((r.outcome == Outcome::Scratch));
  BOOST_TEST(mentions(r.trace.back(), "that is the host object /etc/hosts"));
}

BOOST_AUTO_TEST_CASE(dev_and_proc_are_the_sandboxs_own) {
  auto t = replay(args({"--ro-bind / /", "--dev /dev", "--proc /proc"}));
  BOOST_TEST((at(t, "/proc/1/status", FsOp::Read) == Outcome::Scratch));
  BOOST_TEST((at(t, "/proc/sys/kernel/x", FsOp::Write) == Outcome::Denied));
  BOOST_TEST((at(t, "/dev/null", FsOp::Read) == Outcome::Scratch));
  BOOST_TEST((at(t, "/dev/sda", FsOp::Read) == Outcome::Denied));
  BOOST_TEST((at(t, "/dev/shm/x", FsOp::Create) == Outcome::Scratch));
  BOOST_TEST((t.mount_at(P("/proc"))->kind == MountTable::MountKind::Proc));
}

BOOST_AUTO_TEST_CASE(paths_outside_every_mount_are_not_visible) {
  auto t = replay(args({"--ro-bind /usr /usr", "--ro-bind /a/b/c /a/b/c"}));
  BOOST_TEST((at(t, "/usr/bin/sh", FsOp::Read) == Outcome::Host));
  BOOST_TEST((at(t, "/etc/passwd", FsOp::Read) == Outcome::Denied));
  BOOST_TEST(
      mentions(trace(t, "/etc/passwd", FsOp::Read), "does not exist in bwrap's empty root tmpfs"));
  BOOST_TEST((at(t, "/a/b", FsOp::Read) == Outcome::Scratch));  // a parent bwrap created
  BOOST_TEST((at(t, "/a/x", FsOp::Read) == Outcome::Denied));
  BOOST_TEST((at(t, "/new", FsOp::Create) == Outcome::Scratch));
}

BOOST_AUTO_TEST_CASE(remount_ro_changes_only_that_mount_and_needs_a_mount_point) {
  auto t = replay(args({"--bind /w /w", "--bind /w/sub /w/sub", "--remount-ro /w"}));
  BOOST_TEST((at(t, "/w/x", FsOp::Write) == Outcome::Denied));
  BOOST_TEST((at(t, "/w/sub/x", FsOp::Write) == Outcome::Host));
  auto parsed = parse_bwrap_args(args({"--ro-bind / /", "--remount-ro /h"}));
  auto r = MountTable::replay(*parsed, [](size_t) { return true; });
  BOOST_TEST_REQUIRE(!r.has_value());
  BOOST_TEST(r.error().loc.line == 4);
  BOOST_TEST(mentions(r.error().message, "not a mount point"));
}

BOOST_AUTO_TEST_CASE(a_skipped_try_bind_leaves_what_was_below) {
  const auto text = args({"--ro-bind / /", "--bind /w /w", "--ro-bind-try /w/.git /w/.git"});
  MountTable skipped = replay(text, true), applied = replay(text, false);
  BOOST_TEST((at(skipped, "/w/.git/x", FsOp::Create) == Outcome::Denied));
  BOOST_TEST((at(applied, "/w/.git/x", FsOp::Create) == Outcome::Host));
}

BOOST_AUTO_TEST_CASE(a_bind_elsewhere_is_an_alias_of_the_host_object) {
  auto t = replay(args({"--ro-bind / /", "--perms 000", "--tmpfs /h/.ssh", "--remount-ro /h/.ssh",
                        "--ro-bind /h /mnt/h"}));
  BOOST_TEST((at(t, "/h/.ssh/id", FsOp::Read) == Outcome::Denied));
  auto r = t.host_access(P("/h/.ssh/id"), FsOp::Read);
  BOOST_TEST((r.outcome == Outcome::Host));
  BOOST_TEST(mentions(r.trace.front(), "also visible at /mnt/h/.ssh/id"));
  BOOST_TEST((t.host_access(P("/h/.ssh/id"), FsOp::Write).outcome == Outcome::Denied));
}

BOOST_AUTO_TEST_CASE(reach_all_answers_as_access_and_host_access_do) {
  // /h/v/f is written through its writable alias /mnt/v/f, then asked about again.
  const auto without_links =
      args({"--ro-bind / /", "--perms 000", "--tmpfs /h/.ssh", "--remount-ro /h/.ssh",
            "--ro-bind /h /mnt/h", "--bind /w /w", "--ro-bind /w/.git /w/.git", "--dev /dev",
            "--proc /proc", "--perms 0555", "--dir /d", "--bind /h/v /mnt/v"});
  const auto with_links = without_links + args({"--symlink ../etc /h/e"});
  for (const auto& text : {without_links, with_links}) {
    auto t = replay(text);
    for (const char* path :
         {"/", "/h/.ssh/id", "/h/.ssh", "/mnt/h/x", "/w/.git", "/w/.git/config", "/w/a",
          "/dev/null", "/proc/1", "/d", "/d/x", "/h/e/passwd", "/h/e", "/h/v/f"}) {
      const PathTable::Id id = t.paths().intern(P(path));
      const MountTable::Reaches all = t.reach_all(id);
      for (FsOp op : kAllFsOps) {
        const auto i = static_cast<size_t>(op);
        const AccessResult a = t.access(id, op), h = t.host_access(id, op);
        BOOST_TEST((all.at_path[i].outcome == a.outcome && all.at_path[i].host == a.host),
                   path << " " << to_string(op));
        BOOST_TEST((all.of_host[i].outcome == h.outcome && all.of_host[i].host == h.host),
                   path << " " << to_string(op));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(symlinks_created_by_bwrap_are_followed) {
  auto t = replay(args(
      {"--ro-bind / /", "--tmpfs /t", "--symlink /etc /t/etc", "--symlink ../etc/hosts /t/h"}));
  auto r = t.access(P("/t/etc/passwd"), FsOp::Read);
  BOOST_TEST((r.outcome == Outcome::Host));
  BOOST_TEST(t.paths().path(*r.host).str() == "/etc/passwd");
  BOOST_TEST(t.paths().path(*t.access(P("/t/h"), FsOp::Read).host).str() == "/etc/hosts");
  // Deleting a link removes the link, not its target.
  BOOST_TEST((at(t, "/t/etc", FsOp::Delete) == Outcome::Scratch));
}

BOOST_AUTO_TEST_CASE(symbolic_roots_sit_below_slash) {
  auto t = replay(args({"--ro-bind / /", "--bind ${WORKSPACE} ${WORKSPACE}"}));
  auto r = t.access(P("${WORKSPACE}/src/a.c"), FsOp::Create);
  BOOST_TEST((r.outcome == Outcome::Host));
  BOOST_TEST(t.paths().path(*r.host).str() == "${WORKSPACE}/src/a.c");
  BOOST_TEST((at(t, "${HOME}/.bashrc", FsOp::Write) == Outcome::Denied));
  BOOST_TEST(t.paths().path(*t.access(P("${HOME}/.bashrc"), FsOp::Read).host).str() ==
             "${HOME}/.bashrc");
}

BOOST_AUTO_TEST_CASE(dir_modes_and_chmod_bind_on_a_read_only_tmpfs) {
  auto open_dir = replay(args({"--tmpfs /t", "--perms 0700", "--dir /t/d", "--remount-ro /t"}));
  BOOST_TEST((at(open_dir, "/t/d", FsOp::Read) == Outcome::Scratch));
  auto closed = replay(args({"--tmpfs /t", "--dir /t/d", "--chmod 000 /t/d", "--remount-ro /t"}));
  BOOST_TEST((at(closed, "/t/d", FsOp::Read) == Outcome::Denied));
  auto parsed = parse_bwrap_args(args({"--tmpfs /t", "--remount-ro /t", "--chmod 0755 /t"}));
  auto r = MountTable::replay(*parsed, [](size_t) { return true; });
  BOOST_TEST(!r.has_value());
}

BOOST_AUTO_TEST_SUITE_END()
