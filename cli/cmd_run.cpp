#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "cli/run_options.hpp"
#include "cli/status_file_location.hpp"
#include "zpolicy/json.hpp"

namespace zpolicy::cli {

int cmd_run(const Args& args) {
  const std::string usage =
      "zpolicy run [--policy POLICY] [--mode M] [--workspace DIR] [--timeout T] [--env "
      "NAME[=V]]... "
      "[--accept LINT]... [--status-file FILE] "
      "-- CMD [ARG...]";
  po::options_description opts("run options");
  opts.add_options()("status-file", po::value<std::string>(),
                     "when the run ends, write its status here as JSON: the exit code and each "
                     "destination the network proxy refused (docs/run.md \"Run status\")");
  po::variables_map vm;
  RunRequest req;
  bool help = false;
  if (!parse_run_options(args, "run", usage, opts, vm, req, help)) return kExitUsage;
  if (help) return kExitOk;
  if (!vm.count("status-file")) return run(req, std::cerr);
  // Opened before anything starts, so that a status that cannot be written refuses the
  // run instead of losing its refusals afterwards.
  const std::string path = vm["status-file"].as<std::string>();
  // Refused before anything starts when the sandbox could forge it, and before the file is
  // opened: through a symlink a sandbox planted on the way, opening would create or
  // truncate a file elsewhere (red team R7-S2). A plan that does not come about is
  // refused again, with its reasons, by the run itself.
  if (const auto planned = plan(req); planned.plan)
    if (const auto root = writable_root_holding(*planned.plan, path); !root.empty()) {
      std::cerr << "zpolicy: run: --status-file '" << path << "' lies in writable root '" << root
                << "': the command could replace it with a status of its own; write it "
                   "outside every writable root; nothing ran\n";
      return kExitUsage;
    }
  // Never blocking on what is found there (a FIFO planted by an earlier sandbox would
  // hang the run before it starts; red team R5-S1): only a regular file is a status file.
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 || ftruncate(fd, 0) != 0) {
    const int e = errno;
    std::cerr << "zpolicy: run: cannot write --status-file '" << path << "': "
              << (fd >= 0 && !S_ISREG(st.st_mode) ? "not a regular file" : std::strerror(e))
              << "; nothing ran\n";
    if (fd >= 0) close(fd);
    return kExitUsage;
  }
  const RunStatus status = run_with_status(req, std::cerr);
  const std::string json = run_status_json(status);
  // What a command wrote into the file meanwhile (it may lie in a writable root) is
  // not left after the document.
  size_t done = ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0 ? 0 : json.size() + 1;
  while (done < json.size()) {
    const ssize_t w = write(fd, json.data() + done, json.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  const bool written = done == json.size();
  if (close(fd) != 0 || !written)
    std::cerr << "zpolicy: run: cannot write --status-file '" << path
              << "': " << std::strerror(errno) << "\n";
  return status.exit_code;
}

}  // namespace zpolicy::cli
