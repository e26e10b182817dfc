#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>

namespace zpolicy::compiler {
struct RunPlan;
}

namespace zpolicy::runner {

// The file `run --status-file` leaves the run's status in (docs/run.md "Run status"),
// open from before the command starts to after it ended, so that a status that cannot be
// written refuses the run instead of losing what the run observed.
class StatusFile {
 public:
  // Refused (exit 2, nothing written, printed to `err`) when `plan` is given and its
  // sandbox could reach the file's directory (status_file_location.hpp): the command could
  // rename the file away and forge a status of its own (red team R5-S2, R6-S1, R7-S1).
  // Refused too when the file has other names (hard links): writing it would write them.
  // Checked before the file is opened, since opening through a symlink the sandbox planted
  // would create or truncate a file elsewhere (R7-S2). Only a regular file is a status
  // file, and opening it never blocks (a FIFO planted there, R5-S1).
  static std::variant<StatusFile, int> open(const std::string& path,
                                            const compiler::RunPlan* plan, std::ostream& err);

  // Empties the document an earlier run left at `path`, when it is a regular file of one
  // name, named without symlinks (none is followed, nor a hard link emptied: one a sandbox
  // planted would empty a file elsewhere), before this run resolves its policy. A signal then ends
  // zpolicy by its default action, the file not yet opened, and the earlier document (`"exit_code":
  // 0`) stood for this run's (red team A28D-6). Nothing is created; what cannot be emptied is left
  // for open() to judge.
  static void empty_earlier(const std::string& path);

  StatusFile(StatusFile&& other) noexcept;
  StatusFile& operator=(StatusFile&&) = delete;
  StatusFile(const StatusFile&) = delete;
  ~StatusFile();

  // Replaces whatever the file holds (a command may have written into it meanwhile) with
  // `document` and closes it. A failure is printed to `err`; the run's status stands.
  void write(std::string_view document, std::ostream& err);

 private:
  StatusFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace zpolicy::runner
