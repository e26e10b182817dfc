#include "runner/run_records.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "ir/target.hpp"

namespace zpolicy::runner {

namespace {

// Only what a run of this user wrote is a record: a regular file of the caller's, closed
// to everybody else as runs create it (0600), with no other name. The state directory is private
// and hidden from every sandbox (compiler/resolve/state_dir.hpp), so nothing else should be there;
// anything else is left alone rather than trusted.
bool written_by_a_run(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() &&
         (st.st_mode & 077) == 0 && st.st_nlink == 1;
}

// The record's lines, split as every file zpolicy writes an entry a line into is read
// (ir::artifact_lines): a final newline ends the last line.
std::vector<std::string> lines_of(int fd) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = pread(fd, buf, sizeof buf, static_cast<off_t>(text.size()))) > 0;)
    text.append(buf, static_cast<size_t>(n));
  std::vector<std::string> out;
  for (const std::string_view line : ir::artifact_lines(text)) out.emplace_back(line);
  return out;
}

}  // namespace

std::vector<RunRecord> read_run_records(const std::string& dir, const std::string& own) {
  std::vector<RunRecord> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("run-", 0) != 0) continue;
    std::string path = dir + "/" + name;
    if (path == own) continue;
    int fd = openat(dirfd(d), e->d_name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) continue;
    if (!written_by_a_run(fd)) {
      close(fd);
      continue;
    }
    RunRecord r{path, flock(fd, LOCK_EX | LOCK_NB) != 0, lines_of(fd)};
    close(fd);
    out.push_back(std::move(r));
  }
  closedir(d);
  std::sort(out.begin(), out.end(),
            [](const RunRecord& a, const RunRecord& b) { return a.path < b.path; });
  return out;
}

namespace {

constexpr const char* kFormat2 = "v2";

// "-" (none) or "SECONDS.NANOSECONDS"; false for anything else.
bool parse_birth(const std::string& word, std::optional<BirthTime>& out) {
  if (word == "-") return true;
  BirthTime b;
  std::istringstream in(word);
  char dot = 0;
  if (!(in >> b.sec >> dot >> b.nsec) || dot != '.' || b.nsec >= 1000000000u || in.get() != EOF)
    return false;
  out = b;
  return true;
}

}  // namespace

std::optional<RecordedPlaceholder> parse_record_line(const std::string& line) {
  RecordedPlaceholder p;
  std::istringstream in(line);
  std::string first;
  if (!(in >> first)) return std::nullopt;
  if (first == kFormat2) {
    std::string birth;
    if (!(in >> p.dev >> p.ino >> birth) || !parse_birth(birth, p.birth)) return std::nullopt;
  } else {
    std::istringstream dev(first);
    if (!(dev >> p.dev) || dev.get() != EOF || !(in >> p.ino)) return std::nullopt;
  }
  in.get();
  std::getline(in, p.path);
  if (p.path.empty() || p.path[0] != '/') return std::nullopt;
  return p;
}

std::string record_line(const RecordedPlaceholder& p) {
  std::string birth = "-";
  if (p.birth) {
    const std::string nsec = std::to_string(p.birth->nsec);
    birth = std::to_string(p.birth->sec) + "." + std::string(9 - nsec.size(), '0') + nsec;
  }
  return std::string(kFormat2) + " " + std::to_string(p.dev) + " " + std::to_string(p.ino) + " " +
         birth + " " + p.path + "\n";
}

void rewrite_run_record(const std::string& dir, const std::string& record,
                        const std::vector<std::string>& lines) {
  if (lines.empty()) {
    unlink(record.c_str());
    return;
  }
  const std::string tmp = dir + "/rewrite-" + std::to_string(getpid());
  unlink(tmp.c_str());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  const bool written =
      write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
  close(fd);
  if (!written || rename(tmp.c_str(), record.c_str()) != 0) unlink(tmp.c_str());
}

}  // namespace zpolicy::runner
