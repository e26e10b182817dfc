#include "runner/placeholders.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <system_error>

#include "compiler/resolve/resolve.hpp"
#include "compiler/resolve/state_dir.hpp"
#include "runner/host_run_lock.hpp"
#include "runner/open_no_symlinks.hpp"
#include "runner/placeholder_removal.hpp"
#include "runner/run_records.hpp"
#include "runner/state_dir_exposure.hpp"

namespace zpolicy::runner {
namespace {

// A directory we may keep state in: ours, not a symlink, closed to everybody else.
bool private_dir(const std::string& dir) {
  mkdir(dir.c_str(), 0700);
  struct stat st;
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
         (st.st_mode & 077) == 0;
}

// The state directory of this process's own (compiler/resolve/state_dir.hpp): made by the
// first run of the process that needs it, removed when the last one ends. Runs of one
// process (the API) may overlap.
std::mutex own_state_mutex;
int own_state_users = 0;

bool enter_own_state_dir(const std::string& dir) {
  std::lock_guard<std::mutex> guard(own_state_mutex);
  if (!private_dir(dir)) return false;
  ++own_state_users;
  return true;
}

void leave_own_state_dir(const std::string& dir) {
  std::lock_guard<std::mutex> guard(own_state_mutex);
  if (--own_state_users > 0) return;
  // Nothing reads it once this process is gone: what is left of the runs' records with it.
  for (const auto& r : read_run_records(dir)) unlink(r.path.c_str());
  unlink((dir + "/lock").c_str());
  rmdir(dir.c_str());
}

class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ >= 0 && flock(fd_, LOCK_EX) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// The placeholders live runs rely on, by path, with the identity each recorded.
using LiveSet = std::set<std::string>;

LiveSet live_paths(const std::vector<RunRecord>& records,
                   std::vector<RecordedPlaceholder>* identities = nullptr) {
  LiveSet live;
  for (const auto& r : records)
    if (r.live)
      for (const auto& l : r.lines)
        if (auto p = parse_record_line(l)) {
          live.insert(p->path);
          if (identities) identities->push_back(std::move(*p));
        }
  return live;
}

// A placeholder that cannot be told from a directory made there since (no birth time) stays
// in its record, so that `doctor` lists it and `zpolicy cleanup` names it to the user.
void reconcile_dead(const std::string& dir, const std::vector<RunRecord>& records,
                    const std::set<std::string>& live) {
  for (const auto& r : records) {
    if (r.live) continue;
    for (const auto& line : r.lines)
      if (auto p = parse_record_line(line); p && !live.count(p->path)) restore_access_if_ours(*p);
    std::vector<std::string> unidentified;
    for (auto it = r.lines.rbegin(); it != r.lines.rend(); ++it)
      if (auto p = parse_record_line(*it);
          p && !live.count(p->path) && remove_if_ours(*p) == Removal::Unidentified)
        unidentified.insert(unidentified.begin(), *it);
    // Unchanged, it is not written again: every run that starts alone comes here. An empty
    // one is removed: a run that made no placeholder and ended beside a live one leaves it,
    // and each record left is read by every later run (hundreds of them slowed each run's
    // placeholders and cleanup eightfold). Only a run alone on the host comes here, under
    // the directory's lock, so no run is between making its record and locking it.
    if (r.lines.empty() || unidentified.size() != r.lines.size())
      rewrite_run_record(dir, r.path, unidentified);
  }
}

}  // namespace

std::string Placeholders::state_dir() { return compiler::zpolicy_state_dir(); }

Placeholders::~Placeholders() { cleanup(); }

void Placeholders::leave_state_dir() {
  if (!in_own_state_dir_) return;
  in_own_state_dir_ = false;
  leave_own_state_dir(state_dir());
}

bool Placeholders::prepare(ir::Resolved& r, std::string& error,
                           const std::vector<compiler::MountEntry>& host_mounts) {
  const std::string dir = state_dir();
  // Fail closed: state the sandbox could reach (lock it, edit a record) would let it
  // stall other runs or have cleanup remove what a live run relies on.
  if (r.mode == ir::Mode::WorkspaceWrite || r.mode == ir::Mode::ReadOnly) {
    bool hidden = ir::within_any(r.deny, dir);
    if (!hidden) {
      error = "internal error: the state directory '" + dir + "' is not hidden from the sandbox";
      return false;
    }
  }
  // Checked before the directory of its own is made: a refused run leaves nothing.
  if (compiler::zpolicy_state_dir_is_private_to_this_process() &&
      (r.mode == ir::Mode::WorkspaceWrite || r.mode == ir::Mode::ReadOnly)) {
    const std::string usual = compiler::zpolicy_usual_state_dir();
    if (const std::string where = usual_state_dir_makeable(r, usual, host_mounts); !where.empty()) {
      struct stat st;
      const std::string holder = lstat(usual.c_str(), &st) == 0 ? "uid " + std::to_string(st.st_uid)
                                                                : "another user (it is gone now)";
      error = "the usual state directory '" + usual + "' is held by " + holder +
              ", so this run keeps its state elsewhere, and the sandbox could make '" + usual +
              "' once it is freed, through " + where +
              ", with run records a later run or `zpolicy cleanup` would act on; have it "
              "removed, or do not make its parent writable; refusing to run";
      return false;
    }
  }
  if (compiler::zpolicy_state_dir_is_private_to_this_process() && !in_own_state_dir_) {
    if (!enter_own_state_dir(dir)) {
      error = "state directory '" + dir + "' is not a private directory owned by this user";
      return false;
    }
    in_own_state_dir_ = true;
  }
  if (!private_dir(dir)) {
    error = "state directory '" + dir + "' is not a private directory owned by this user";
    return false;
  }
  if (r.mode == ir::Mode::WorkspaceWrite || r.mode == ir::Mode::ReadOnly) {
    if (const std::string other = state_dir_exposed(r, dir, host_mounts); !other.empty()) {
      error = "the state directory '" + dir + "' is also " + other +
              ", where the sandbox could reach zpolicy's own state (write what later runs act on, "
              "or hold the lock they wait for); refusing to run";
      return false;
    }
  }
  // Run records are per user, so only the host run lock tells one user's cleanup that
  // another user's run (or the same user's under another state directory) may rely on a
  // placeholder.
  if (!host_lock_.acquire(error, note_)) return false;
  FileLock lock(dir + "/lock");
  if (!lock.ok()) {
    error = "cannot lock '" + dir + "/lock'";
    return false;
  }
  std::random_device rd;
  record_path_ = dir + "/run-" + std::to_string(getpid()) + "-" + std::to_string(rd());
  record_fd_ = open(record_path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (record_fd_ < 0 || flock(record_fd_, LOCK_EX) != 0) {
    error = "cannot create run record '" + record_path_ + "': " + std::strerror(errno);
    return false;
  }
  auto records = read_run_records(dir, record_path_);
  if (host_lock_.alone()) {
    reconcile_dead(dir, records, live_paths(records));
    if (!host_lock_.share(error)) return false;
  }
  // A live run holds each of its placeholders open (runner/placeholder_removal.hpp), so
  // the device and inode number it recorded name that directory while it lives.
  std::vector<RecordedPlaceholder> shared;
  live_paths(records, &shared);

  // Every path that must exist before bwrap binds it, shallowest first. Each is walked
  // from its writable root with O_NOFOLLOW (a symlink planted on the host since
  // resolution cannot redirect a placeholder out of the root), whether it exists now or
  // not: a directory another live run made is this run's placeholder too, and is
  // recorded here so that the other run's cleanup leaves it in place.
  std::vector<ir::ResolvedPath*> needed = compiler::placeholder_candidates(r);
  for (auto* p : needed) {
    const ir::ResolvedPath* root = nullptr;
    for (const auto& w : r.write)
      if (ir::path_within(w.path, p->path)) root = &w;
    if (!root) continue;
    // The root is opened as resolved, never through a symlink swapped in since, and must
    // be the object resolution saw: placeholders are never made in another directory.
    int fd = open_no_symlinks(root->path, O_RDONLY | O_DIRECTORY | O_NONBLOCK);
    struct stat root_st;
    if (fd < 0 || fstat(fd, &root_st) != 0 || !root->identity ||
        *root->identity != ir::HostIdentity{static_cast<std::uint64_t>(root_st.st_dev),
                                            static_cast<std::uint64_t>(root_st.st_ino)}) {
      error = "writable root '" + root->path +
              "' is not the directory that was verified (replaced or swapped for a symlink)";
      if (fd >= 0) close(fd);
      return false;
    }
    std::string cur = root->path;
    bool made_here = false;  // the last component was created by this run just now
    std::istringstream comps(p->path.substr(root->path.size()));
    for (std::string c; fd >= 0 && std::getline(comps, c, '/');) {
      if (c.empty()) continue;
      cur += "/" + c;
      bool created = mkdirat(fd, c.c_str(), 0755) == 0;
      made_here = created;
      if (!created && errno != EEXIST) {
        error = "cannot create placeholder '" + cur + "': " + std::strerror(errno);
        close(fd);
        return false;
      }
      // O_DIRECTORY fails on anything else before a FIFO or device could be opened.
      int next =
          openat(fd, c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      const bool recorded = std::any_of(entries_.begin(), entries_.end(),
                                        [&](const Entry& e) { return e.placeholder.path == cur; });
      std::optional<RecordedPlaceholder> now;
      if (next >= 0 && !recorded) now = examine_placeholder(next);
      if (now) now->path = cur;
      const auto same = [&](const RecordedPlaceholder& l) {
        return l.path == now->path && l.dev == now->dev && l.ino == now->ino &&
               l.birth == now->birth;
      };
      if (now && (created || std::any_of(shared.begin(), shared.end(), same))) {
        // Held until the run's cleanup: the inode, and so its number, stays this directory's.
        Entry e{*now, fcntl(next, F_DUPFD_CLOEXEC, 0)};
        const std::string line = record_line(e.placeholder);
        // Written before the next placeholder is made, so that a run killed meanwhile
        // leaves a record of each; made durable once, below.
        if (e.held < 0 ||
            write(record_fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
          error = e.held < 0 ? "cannot hold placeholder '" + cur + "': " + std::strerror(errno)
                             : "cannot write run record '" + record_path_ + "'";
          if (e.held >= 0) close(e.held);
          close(next);
          close(fd);
          return false;
        }
        entries_.push_back(std::move(e));
      }
      close(fd);
      fd = next;
    }
    if (fd >= 0) close(fd);
    struct stat st;
    if (lstat(p->path.c_str(), &st) != 0) {
      error = "cannot create placeholder '" + p->path + "'";
      return false;
    }
    if (S_ISLNK(st.st_mode)) {
      error = "'" + p->path + "' became a symlink; refusing to run";
      return false;
    }
    // What existed at resolution must still be that object, unless this run just made
    // it (a dead run's placeholder reconciled away above, made again); either way the
    // identity is recorded, so that the bind descriptor is checked against it
    // (runner/bind_sources).
    const ir::HostIdentity now{static_cast<std::uint64_t>(st.st_dev),
                               static_cast<std::uint64_t>(st.st_ino)};
    if (p->identity && *p->identity != now && !made_here) {
      error = "'" + p->path + "' was replaced after verification; refusing to run";
      return false;
    }
    p->identity = now;
    p->kind = S_ISDIR(st.st_mode) ? ir::HostKind::Directory : ir::HostKind::File;
  }
  if (entries_.empty()) {
    note_.clear();  // nothing of this run's will stay
    return true;
  }
  // One fsync for all the records (it was one per record, each before bwrap could start):
  // only a machine crash needs it, and records_durable() waits for it before the command
  // is released. The thread takes no signal (the runner's handlers are the main thread's).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  try {
    synced_ = std::async(std::launch::async, [fd = record_fd_] { return fsync(fd) == 0; });
  } catch (const std::system_error&) {
    synced_ = std::async(std::launch::deferred, [fd = record_fd_] { return fsync(fd) == 0; });
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return true;
}

std::vector<int> Placeholders::held() const {
  std::vector<int> out;
  for (const auto& e : entries_) out.push_back(e.held);
  return out;
}

bool Placeholders::records_durable() {
  if (synced_.valid()) durable_ = synced_.get();
  return durable_;
}

void Placeholders::cleanup() {
  if (record_fd_ < 0) {
    leave_state_dir();
    return;
  }
  records_durable();  // the fsync must not outlive the descriptor it syncs
  const std::string dir = state_dir();
  // The sandbox is gone, so this record protects nothing any more; it is unlocked before
  // the host run lock is tried. Two runs ending together each try it while the other still
  // holds it shared: the first fails (and loses its shared hold), the second gets it, and
  // read the first's record as a live run's as long as it was still locked, so both left
  // every placeholder behind (red team R8-P1).
  flock(record_fd_, LOCK_UN);
  // With another run live (possibly another user's, whose records this one cannot read),
  // or without a host run lock this run can trust, the record stays: unlocked, it reads as
  // a dead run's, reconciled by a later run of this user that finds the host quiet (or by
  // `zpolicy cleanup`), or by a run of this user ending alone just after.
  if (host_lock_.alone_at_the_end()) {
    FileLock lock(dir + "/lock");
    const auto records = read_run_records(dir, record_path_);
    auto live = live_paths(records);
    reconcile_dead(dir, records, live);
    for (const auto& e : entries_)
      if (!live.count(e.placeholder.path)) restore_access_if_ours(e.placeholder, e.held);
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
      if (!live.count(it->placeholder.path)) remove_if_ours(it->placeholder, it->held);
    unlink(record_path_.c_str());
  }
  close(record_fd_);
  record_fd_ = -1;
  host_lock_.release();
  for (const auto& e : entries_) close(e.held);
  entries_.clear();
  leave_state_dir();
}

}  // namespace zpolicy::runner
