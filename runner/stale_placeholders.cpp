#include "runner/stale_placeholders.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "ir/path.hpp"
#include "runner/host_run_lock.hpp"
#include "runner/placeholders.hpp"

namespace zpolicy::runner {
namespace {

// Nothing in a directory another user could write is acted on: its records could name
// anything. An absent directory means no run has left anything.
enum class StateDir { Absent, Private, Foreign };
StateDir state_dir_status(const std::string& dir) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return errno == ENOENT ? StateDir::Absent : StateDir::Foreign;
  return S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 077) == 0
             ? StateDir::Private
             : StateDir::Foreign;
}

}  // namespace

std::vector<std::string> stale_placeholders() {
  const std::string dir = Placeholders::state_dir();
  if (state_dir_status(dir) != StateDir::Private) return {};
  std::set<std::string> out;
  for (const auto& r : read_run_records(dir))
    if (!r.live)
      for (const auto& line : r.lines)
        if (auto p = parse_record_line(line); p && still_recorded(*p)) out.insert(p->path);
  return {out.begin(), out.end()};
}

std::optional<Cleanup> remove_stale_placeholders(const std::optional<std::string>& within,
                                                 std::string& error) {
  const std::string dir = Placeholders::state_dir();
  Cleanup out;
  switch (state_dir_status(dir)) {
    case StateDir::Absent:
      return out;
    case StateDir::Foreign:
      error = "state directory '" + dir + "' is not a private directory owned by this user";
      return std::nullopt;
    case StateDir::Private:
      break;
  }
  // Every run takes this lock before it reads or writes a record, so holding it
  // exclusively also keeps the records still. A lock that cannot be trusted proves
  // nothing about other users' runs.
  HostRunLock lock;
  std::string note;
  if (!lock.acquire(out.why_not, note) || !lock.alone()) {
    out.host_quiet = false;
    if (out.why_not.empty())
      out.why_not = note.empty() ? "a zpolicy run is live on this host (any user's) and may "
                                   "rely on any placeholder"
                                 : note;
    return out;
  }
  for (const auto& r : read_run_records(dir)) {
    if (r.live) continue;
    std::vector<RecordedPlaceholder> mine;
    std::vector<std::string> left;
    for (const auto& line : r.lines) {
      auto p = parse_record_line(line);
      if (p && (!within || ir::path_within(*within, p->path)))
        mine.push_back(std::move(*p));
      else if (p)
        left.push_back(line);
    }
    if (mine.empty() && !left.empty()) continue;
    for (const auto& p : mine) restore_access_if_ours(p);
    for (auto it = mine.rbegin(); it != mine.rend(); ++it)
      out.placeholders.emplace_back(it->path, remove_if_ours(*it));
    rewrite_run_record(dir, r.path, left);
  }
  return out;
}

}  // namespace zpolicy::runner
