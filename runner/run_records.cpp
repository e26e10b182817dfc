#include "runner/run_records.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace zpolicy::runner {

std::vector<RunRecord> read_run_records(const std::string& dir, const std::string& own) {
  std::vector<RunRecord> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("run-", 0) != 0) continue;
    std::string path = dir + "/" + name;
    if (path == own) continue;
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    RunRecord r{path, flock(fd, LOCK_EX | LOCK_NB) != 0, {}};
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) r.lines.push_back(line);
    close(fd);
    out.push_back(std::move(r));
  }
  closedir(d);
  std::sort(out.begin(), out.end(),
            [](const RunRecord& a, const RunRecord& b) { return a.path < b.path; });
  return out;
}

std::optional<RecordedPlaceholder> parse_record_line(const std::string& line) {
  RecordedPlaceholder p;
  std::istringstream in(line);
  if (!(in >> p.dev >> p.ino)) return std::nullopt;
  in.get();
  std::getline(in, p.path);
  if (p.path.empty() || p.path[0] != '/') return std::nullopt;
  return p;
}

std::string record_line(const RecordedPlaceholder& p) {
  return std::to_string(p.dev) + " " + std::to_string(p.ino) + " " + p.path + "\n";
}

}  // namespace zpolicy::runner
