#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zpolicy::runner {

// The run records of the state directory (runner/placeholders.hpp): one file "run-*" per
// run, one line "DEV INO PATH" per placeholder the run relies on, locked (flock) for the
// run's life. A record nobody holds locked belongs to a run that died.
struct RecordedPlaceholder {
  std::string path;
  unsigned long long dev = 0, ino = 0;
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

// The line that records `p`.
std::string record_line(const RecordedPlaceholder& p);

}  // namespace zpolicy::runner
