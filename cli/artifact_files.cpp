#include "cli/artifact_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>

namespace zpolicy::cli {
namespace {

// An exchange of two names (when `exchange`), or a move onto a name that must be free.
// Neither follows a symlink: a rename moves directory entries, never what they point to.
bool move_entry(int from_dir, const std::string& name, int to_dir, bool exchange) {
#if defined(__APPLE__)
  return renameatx_np(from_dir, name.c_str(), to_dir, name.c_str(),
                      exchange ? RENAME_SWAP : RENAME_EXCL) == 0;
#else
  return renameat2(from_dir, name.c_str(), to_dir, name.c_str(),
                   exchange ? RENAME_EXCHANGE : RENAME_NOREPLACE) == 0;
#endif
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

std::string errno_text() { return std::strerror(errno); }

bool write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return fsync(fd) == 0;
}

}  // namespace

bool write_artifacts(const std::string& dir, const std::vector<Artifact>& artifacts,
                     std::string& error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    error = "cannot create '" + dir + "': " + ec.message();
    return false;
  }
  Fd out(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!out.ok()) {
    error = errno == ELOOP || errno == ENOTDIR
                ? "'" + dir + "' is a symlink; give the directory it points to"
                : "cannot open '" + dir + "': " + errno_text();
    return false;
  }
  std::vector<bool> existed;
  for (const auto& a : artifacts) {
    struct stat st;
    if (fstatat(out.get(), a.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) {
        error = "cannot look at '" + dir + "/" + a.name + "': " + errno_text();
        return false;
      }
      existed.push_back(false);
    } else if (!S_ISREG(st.st_mode)) {
      error = "'" + dir + "/" + a.name + "' is not a regular file (" +
              (S_ISLNK(st.st_mode) ? "a symlink" : S_ISDIR(st.st_mode) ? "a directory" : "a special file") +
              "); refusing to write through it";
      return false;
    } else {
      existed.push_back(true);
    }
  }

  std::string staging;
  std::random_device random;
  for (int attempt = 0; staging.empty(); ++attempt) {
    std::string name = ".zpolicy-staging-" + std::to_string(getpid()) + "-" + std::to_string(random());
    if (mkdirat(out.get(), name.c_str(), 0700) == 0) staging = name;
    else if (errno != EEXIST || attempt > 100) {
      error = "cannot create a staging directory in '" + dir + "': " + errno_text();
      return false;
    }
  }
  Fd stage(openat(out.get(), staging.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  auto remove_staging = [&] {
    for (const auto& a : artifacts) unlinkat(stage.get(), a.name.c_str(), 0);
    unlinkat(out.get(), staging.c_str(), AT_REMOVEDIR);
  };
  if (!stage.ok()) {
    error = "cannot open the staging directory in '" + dir + "': " + errno_text();
    unlinkat(out.get(), staging.c_str(), AT_REMOVEDIR);
    return false;
  }
  for (const auto& a : artifacts) {
    Fd f(openat(stage.get(), a.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!f.ok() || !write_all(f.get(), a.content)) {
      error = "cannot write '" + dir + "/" + a.name + "': " + errno_text();
      remove_staging();
      return false;
    }
  }
  for (size_t i = 0; i < artifacts.size(); ++i) {
    if (move_entry(stage.get(), artifacts[i].name, out.get(), existed[i])) continue;
    error = "cannot put '" + dir + "/" + artifacts[i].name + "' in place: " + errno_text() +
            "; nothing was changed";
    // Undo the earlier ones, newest first: exchange back, or move the new file out again.
    for (size_t j = i; j-- > 0;)
      move_entry(out.get(), artifacts[j].name, stage.get(), existed[j]);
    remove_staging();
    return false;
  }
  remove_staging();
  fsync(out.get());
  return true;
}

ArtifactRead read_artifact_file(int dir, const std::string& name, const std::string& shown) {
  struct stat before;
  if (fstatat(dir, name.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0)
    return {std::nullopt, errno == ENOENT ? "" : "cannot look at '" + shown + "': " + errno_text()};
  if (!S_ISREG(before.st_mode))
    return {std::nullopt, "'" + shown + "' is " +
                              (S_ISLNK(before.st_mode)   ? "a symlink"
                               : S_ISDIR(before.st_mode) ? "a directory"
                                                         : "a special file") +
                              ", not the regular file compile writes; refusing to read through it"};
  // Opened without following a link and without blocking, and only if it is still the
  // regular file just looked at (not swapped for a FIFO or a link since).
  Fd f(openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat now;
  if (!f.ok() || fstat(f.get(), &now) != 0 || !S_ISREG(now.st_mode) ||
      now.st_dev != before.st_dev || now.st_ino != before.st_ino)
    return {std::nullopt, "'" + shown + "' changed while it was read; refusing it"};
  std::string content;
  char chunk[16384];
  ssize_t n = 0;
  while (content.size() <= kMaxArtifactBytes && (n = read(f.get(), chunk, sizeof chunk)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {std::nullopt, "cannot read '" + shown + "': " + errno_text()};
    content.append(chunk, static_cast<size_t>(n));
  }
  if (content.size() > kMaxArtifactBytes)
    return {std::nullopt, "'" + shown + "' is larger than " +
                              std::to_string(kMaxArtifactBytes >> 20) +
                              " MiB, more than compile ever writes; refusing it"};
  return {std::move(content), ""};
}

ArtifactRead read_artifact_file(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..")
    return {std::nullopt, "'" + path + "' names a directory, not an artifact file"};
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  Fd in_dir(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!in_dir.ok()) return {std::nullopt, "cannot open '" + dir + "': " + errno_text()};
  return read_artifact_file(in_dir.get(), name, path);
}

std::vector<Artifact> read_artifacts(const std::string& dir, Target target,
                                     std::vector<std::string>& refused) {
  std::vector<Artifact> arts;
  Fd in_dir(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!in_dir.ok()) return arts;  // every artifact is missing, which the caller reports
  for (const auto& name : artifact_names(target)) {
    auto read = read_artifact_file(in_dir.get(), name, dir + "/" + name);
    if (read.content) arts.push_back({name, std::move(*read.content), name.ends_with(".bpf")});
    else if (!read.refusal.empty()) refused.push_back(std::move(read.refusal));
  }
  return arts;
}

}  // namespace zpolicy::cli
