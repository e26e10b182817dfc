#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runner/read_only_streams.hpp"

namespace zpolicy::runner {

// The caller's descriptors 0, 1 and 2, as the sandbox may get them (red team R7-D1). An
// open file keeps the mount it was opened on, the host's, and /proc/self/fd/N is a magic
// link to that object there: opened again inside the sandbox it is checked against the
// host's mount, not the sandbox's read-only view. So a file redirected to stdin
// (`< ../task.sh`) could be reopened for writing, and a directory (`< /etc`) walked into.
// Only what has no such name, and reaches nothing but its other end, passes as it is: a
// pipe, a connected stream socket (a unix one where the filter allows connect(): red team
// A26B-1), a terminal's own side (not a pseudo-terminal's master;
// and, unless it is the caller's controlling terminal, a pseudo-terminal's: red team R17-1),
// and the memory devices (/dev/null, /dev/zero, /dev/urandom, ...); the devices are handed
// over opened again through a read-only mount by the guard's child (read_only(); red team
// R16-2: the caller's own open file would let the sandbox chmod the node). A regular file on
// stdin is handed over as a sealed in-memory copy from its current offset (up to 16 MiB;
// a larger rest through a pipe this process fills); a regular file on stdout or stderr
// gets a pipe, which this process copies into it, and so does a terminal on stdout or
// stderr that is not the caller's controlling terminal, or is, of a run started in the
// background (the sandbox would read it); a terminal on stdin that another session reads
// meanwhile (not the caller's controlling terminal, and no ancestor of the caller's holding
// it in its foreground: `setsid zpolicy run`) is /dev/null to the command. Anything else
// (a directory, a block device, another character device, a named FIFO, a datagram,
// listening or unconnected socket, a pseudo-terminal's master) is refused (docs/run.md
// "Standard input and output").
class StandardStreams {
 public:
  StandardStreams() = default;
  StandardStreams(const StandardStreams&) = delete;
  StandardStreams& operator=(const StandardStreams&) = delete;
  ~StandardStreams();

  // Looks at descriptors 0-2; false, with `why`, when one must not reach the sandbox.
  // `may_connect`: the sandbox's filter lets connect() through (network loopback or an
  // allow list), so a handed-in socket that can be disconnected must not pass (A26B-1).
  bool prepare(std::string& why, bool may_connect);
  // (descriptor here, descriptor number in the sandbox) for each replaced stream.
  const std::vector<std::pair<int, int>>& fds() const { return fds_; }
  // The streams that pass as devices, to be opened again read-only before bwrap's exec.
  const std::vector<ReadOnlyStream>& read_only() const { return read_only_; }
  // Whether one of the sandbox's standard streams is the caller's controlling terminal (the
  // run started in its foreground): the supervision then holds the sandbox stopped while
  // it is not, and does not release it while it is not (red team R18-4, A19-1, A19-2).
  bool controlling_terminal() const { return controlling_terminal_; }
  // Whether a copy into the caller's controlling terminal may wait for the foreground
  // (a run started in the background: `stty tostop` may be set at any time).
  bool may_hold_output() const { return may_hold_output_; }
  // Whether a copy waits to write to the caller's controlling terminal, of which this
  // process is a background job, under `stty tostop`: the kernel would stop the job for
  // the write (red team A19-4), and the supervision does.
  bool output_held() const;
  // Once the sandbox is gone: closes this process's ends and waits until everything the
  // sandbox wrote to a replaced stdout or stderr is copied into it.
  void finish();

 private:
  // prepare() of one of 0-2, by what it is; false, with `why`, when it refuses.
  bool prepare_passed(int fd, const struct stat& st, bool may_connect, std::string& why);
  bool prepare_file_stdin(int fd, std::string& why);
  bool prepare_file_output(int fd, const struct stat& st, std::string& why);
  bool refuse(int fd, const struct stat& st, std::string& why);

  std::vector<std::pair<int, int>> fds_;
  std::vector<ReadOnlyStream> read_only_;
  std::vector<std::thread> copies_;
  // A terminal on stdout or stderr that the sandbox must not read (not the caller's
  // controlling terminal, or it but in the background) reaches it through a pipe (one per
  // terminal), copied by this process.
  struct Relay {
    dev_t terminal;
    int write_end;
  };
  bool relay_to_terminal(int fd, dev_t terminal, std::string& why);
  std::vector<Relay> relays_;
  // A regular file on stdout or stderr reaches it through a pipe, one per file.
  struct FileCopy {
    dev_t dev;
    ino_t ino;
    int flags;  // access mode and O_APPEND
    int write_end;
  };
  std::vector<FileCopy> file_copies_;
  bool controlling_terminal_ = false;
  bool may_hold_output_ = false;

  // `fd` gets another descriptor of the pipe `write_end` (one copied into the same file or
  // terminal already); false when it cannot be duplicated, and `fd` needs a pipe of its own.
  bool shares_pipe(int write_end, int fd);
  // A pipe the sandbox writes to as `fd`, which a thread of this process copies into `fd`:
  // its write end, or none with `why` when no pipe can be made.
  std::optional<int> copied_pipe(int fd, std::string& why);
  // sandbox_gone_, made once; false, with `why`, when it cannot be (for `fd`'s copy).
  bool gone_event(int fd, std::string& why);
  // Copies everything from `from` into `to` until end of file.
  void copy(int from, int to);
  // Waits until a write to `to` would not stop the job; false if it never will, in an
  // orphaned process group.
  bool wait_for_the_foreground(int to);
  // SIGTTOU ignored or blocked when zpolicy started: the kernel lets a background write
  // through.
  bool ttou_ignored_ = false;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int copying_ = 0;  // copy() threads not yet at their end
  // Readable once finish() is called, the sandbox gone: each copy() then takes what is left
  // in its pipe and ends, whoever else still holds the pipe's write end; the feed of a file
  // on stdin stops, whoever else still holds the pipe's read end.
  int sandbox_gone_ = -1;
  int held_ = 0;     // of them, waiting for the foreground
};

}  // namespace zpolicy::runner
