#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zpolicy::runner {

// The run records of the state directory (runner/placeholders.hpp): one file "run-*" per
// run, one line per placeholder the run relies on, locked (flock) for the run's life. A
// record nobody holds locked belongs to a run that died.
//
// A line is "v2 DEV INO BIRTH PATH": the device and inode number of the directory, and
// its birth time (statx STATX_BTIME) as "SECONDS.NANOSECONDS", or "-" when the filesystem
// reports none. The inode number alone does not name the directory once the run is gone:
// ext4 hands a freed number out again at once, so a directory someone makes at that path
// later may carry it; nothing but its creation sets a birth time. Lines of format 1
// ("DEV INO PATH", before 2026-12-05) are read with no birth time.

// When the filesystem made an object.
struct BirthTime {
  long long sec = 0;
  unsigned nsec = 0;
  bool operator==(const BirthTime&) const = default;
};

struct RecordedPlaceholder {
  std::string path;
  unsigned long long dev = 0, ino = 0;
  std::optional<BirthTime> birth;  // none reported by the filesystem, or a line of format 1
};

struct RunRecord {
  std::string path;  // the record file
  bool live = false;
  std::vector<std::string> lines;
};

// Every record in `dir` but `own`, sorted by name. A record is live when its lock cannot be
// taken at the time it is read.
std::vector<RunRecord> read_run_records(const std::string& dir, const std::string& own = "");

// One line of a record, or nullopt for a line that is not one (never acted on).
std::optional<RecordedPlaceholder> parse_record_line(const std::string& line);

// The line that records `p` (format 2).
std::string record_line(const RecordedPlaceholder& p);

// Replaces the record `record` in `dir` by one holding `lines`, or removes it when there
// are none. The new record is written beside it under a name no reader takes for a
// record, then renamed.
void rewrite_run_record(const std::string& dir, const std::string& record,
                        const std::vector<std::string>& lines);

}  // namespace zpolicy::runner
