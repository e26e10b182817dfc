// git_index (git_index.hpp): the gitlinks of a git index, for the submodules the host's git
// enters (`git status` runs `git status` in each populated one, `git fetch` and `git push
// --recurse-submodules` fetch and push from it).
#include "compiler/resolve/git_index.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace zpolicy::compiler {

namespace {

constexpr uint32_t kGitlink = 0160000, kTypeMask = 0170000, kDirectory = 0040000;
constexpr uint16_t kExtended = 0x4000;

// An index a sandbox wrote (a nested repository's, made in an earlier run) can be any size
// and hold anything: a sparse file costs no disk. Read whole into memory, `truncate -s 3G
// n/.git/index` made the next run read 3 GiB of zeros for 38 s and die of bad_alloc under
// a 4 GB address-space limit; twenty nested indexes of 250 MiB, each behind a valid header,
// took every later run 30 s (red team R17-2). So the index is read as it is parsed, in
// blocks, an extension's body skipped unread (but a `link`'s hash), and the first entry or
// extension git would not have written stops it: zeros are neither (an empty name, a
// signature that is no letter, a mode of no type). What is read is what the sandbox wrote
// for real, on disk.
// Over kIndexLimit the file refuses the run unread: 256 MiB is some 2.5 million entries of
// version 2. A name is at most kNameLimit long (git's own names stop at PATH_MAX).
constexpr off_t kIndexLimit = off_t{256} << 20;
constexpr size_t kNameLimit = 1 << 16;
// Each gitlink becomes a protected path (a bind mount), and bwrap takes at most 9 000
// arguments, three a mount: an index recording more submodules than this could never run
// anyway. Read to the end, a sandbox's index of 100 000 gitlinks (7 MB) held every later run
// 56 s before that refusal, one of a million over an hour (red team R17-2: each protected
// path is compared with all those before it).
constexpr size_t kGitlinkLimit = 4096;

// A path git writes into an index (read-cache.c's verify_path): relative, no empty, `.`,
// `..` or `.git` component. A gitlink named otherwise is no submodule git made, and its
// directory, protected as a whole, could be the worktree top or a writable root (red team
// R17-4: a nested repository's index naming `..` made the whole workspace read-only).
bool git_writes(const std::string& name) {
  size_t at = 0;
  for (;;) {
    const size_t slash = name.find('/', at);
    const std::string part =
        name.substr(at, slash == std::string::npos ? std::string::npos : slash - at);
    std::string lower = part;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (part.empty() || part == "." || part == ".." || lower == ".git") return false;
    if (slash == std::string::npos) return true;
    at = slash + 1;
  }
}

uint32_t be32(const char* p) {
  return static_cast<uint32_t>(static_cast<unsigned char>(p[0])) << 24 |
         static_cast<uint32_t>(static_cast<unsigned char>(p[1])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(p[2])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(p[3]));
}

// One index file, opened as the config files are (lstat, O_NOFOLLOW, fstat), read forward
// in blocks: `need` makes the next bytes available at data(), `skip` passes over bytes
// (seeking past what is not read yet).
class IndexFile {
 public:
  ~IndexFile() {
    if (fd_ >= 0) close(fd_);
  }
  // False, with `why`, when it is not a regular file, is over kIndexLimit, or cannot be
  // opened; true with size() 0 when missing.
  bool open(const std::string& path, std::string& why) {
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return true;
      why = "zpolicy cannot look at it";
      return false;
    }
    if (!S_ISREG(st.st_mode)) {
      why = "it is not a regular file";
      return false;
    }
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    // What was opened, not what lstat saw: a FIFO put in its place since reads as empty,
    // which would be an index without gitlinks.
    if (fd_ < 0 || fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      why = fd_ < 0 ? "zpolicy cannot read it" : "it is not a regular file";
      return false;
    }
    if (st.st_size > kIndexLimit) {
      why = "it is larger than " + std::to_string(kIndexLimit >> 20) +
            " MiB, more than zpolicy reads";
      return false;
    }
    size_ = static_cast<size_t>(st.st_size);
    return true;
  }
  size_t size() const { return size_; }
  size_t offset() const { return offset_; }
  // The next `n` bytes at data(); false when the file ends (or cannot be read) first.
  bool need(size_t n) {
    while (buf_.size() - at_ < n) {
      if (at_ > 0) {
        buf_.erase(0, at_);
        at_ = 0;
      }
      char block[65536];
      const ssize_t got = read(fd_, block, sizeof block);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      buf_.append(block, static_cast<size_t>(got));
    }
    return true;
  }
  const char* data() const { return buf_.data() + at_; }
  // The bytes before the first NUL from here, if one comes within kNameLimit.
  std::optional<std::string> name() {
    for (size_t looked = 0;;) {
      const size_t held = buf_.size() - at_;
      if (const void* nul = std::memchr(data() + looked, '\0', held - looked)) {
        const size_t length = static_cast<const char*>(nul) - data();
        std::string out(data(), length);
        skip(length + 1);
        return out;
      }
      looked = held;
      if (held > kNameLimit || !need(held + 1)) return std::nullopt;
    }
  }
  bool skip(size_t n) {
    offset_ += n;
    if (buf_.size() - at_ >= n) {
      at_ += n;
      return true;
    }
    buf_.clear();
    at_ = 0;
    return lseek(fd_, static_cast<off_t>(offset_), SEEK_SET) == static_cast<off_t>(offset_);
  }
  // Bytes handed out by need() and then consumed.
  void consume(size_t n) {
    at_ += n;
    offset_ += n;
  }

 private:
  int fd_ = -1;
  size_t size_ = 0, offset_ = 0, at_ = 0;
  std::string buf_;
};

// varint.c's decode_varint; none on overflow or past the end.
std::optional<uint64_t> varint(IndexFile& f) {
  if (!f.need(1)) return std::nullopt;
  unsigned char c = static_cast<unsigned char>(*f.data());
  f.consume(1);
  uint64_t v = c & 127;
  while (c & 128) {
    ++v;
    if (v == 0 || (v >> 57) != 0 || !f.need(1)) return std::nullopt;
    c = static_cast<unsigned char>(*f.data());
    f.consume(1);
    v = (v << 7) + (c & 127);
  }
  return v;
}

// The entries of one index file; `shared`: the hash a `link` extension names, if any.
void entries(IndexFile& f, size_t hash_size, GitIndexLinks& out,
             std::optional<std::string>& shared) {
  auto bad = [&](const std::string& why) {
    if (!out.unreadable) out.unreadable = why;
  };
  if (f.size() < 12 + hash_size || !f.need(12) || std::memcmp(f.data(), "DIRC", 4) != 0)
    return bad("it is not a git index");
  const uint32_t version = be32(f.data() + 4), count = be32(f.data() + 8);
  f.consume(12);
  if (version < 2 || version > 4)
    return bad("its version " + std::to_string(version) + " is not one zpolicy reads");
  const size_t end = f.size() - hash_size;  // the trailing checksum
  const size_t fixed = 40 + hash_size + 2;  // stat data, mode, ids, size, hash, flags
  std::string name;
  // A split index's entries that replace its shared index's have empty names
  // (split-index.c); the shared index names them.
  bool replaced = false;
  for (uint32_t k = 0; k < count; ++k) {
    const size_t start = f.offset();
    if (start + fixed > end || !f.need(fixed)) return bad("it is cut short");
    const uint32_t mode = be32(f.data() + 24);
    const auto flags = static_cast<uint16_t>(static_cast<unsigned char>(f.data()[fixed - 2]) << 8 |
                                             static_cast<unsigned char>(f.data()[fixed - 1]));
    f.consume(fixed);
    if (version >= 3 && (flags & kExtended) && !f.skip(2)) return bad("it is cut short");
    if (version == 4) {
      const auto strip = varint(f);
      if (!strip || *strip > name.size()) return bad("it is cut short");
      name.resize(name.size() - *strip);
    } else {
      name.clear();
    }
    const auto rest = f.name();
    if (!rest || f.offset() > end) return bad("it is cut short");
    name += *rest;
    if (name.size() > kNameLimit) return bad("it is cut short");
    // Versions 2 and 3 pad each entry with 1 to 8 NULs to a multiple of 8.
    if (version != 4 && !f.skip((start + ((f.offset() - 1 - start + 8) & ~size_t{7})) - f.offset()))
      return bad("it is cut short");
    const uint32_t type = mode & kTypeMask;
    if (type != 0100000 && type != 0120000 && type != kGitlink && type != kDirectory)
      return bad("it records an entry of a type git does not write");
    if (name.empty()) {
      replaced = true;
      continue;
    }
    // A sparse index's directory entries end in '/'.
    if (type == kDirectory)
      return bad("it is a sparse index: '" + name + "' stands for the paths below it");
    if (!git_writes(name)) return bad("it records '" + name + "', a path git never writes");
    if (type == kGitlink && out.paths.size() == kGitlinkLimit)
      return bad("it records more than " + std::to_string(kGitlinkLimit) +
                 " submodules, more than one run can protect");
    if (type == kGitlink) out.paths.push_back(name);
  }
  // Extensions: a 4-byte signature and a 4-byte size each. git reads the optional ones
  // (a capital first letter) and `link` and `sdir`, and refuses any other.
  while (f.offset() + 8 <= end) {
    if (!f.need(8)) return bad("it is cut short");
    const std::string sig(f.data(), 4);
    const uint32_t size = be32(f.data() + 4);
    f.consume(8);
    if (size > end - f.offset()) return bad("it is cut short");
    if ((sig[0] < 'A' || sig[0] > 'Z') && sig != "link" && sig != "sdir")
      return bad("it has an extension git does not read");
    size_t left = size;
    if (sig == "link" && size >= hash_size) {
      if (!f.need(hash_size)) return bad("it is cut short");
      static constexpr char kHex[] = "0123456789abcdef";
      std::string hex;
      for (size_t i = 0; i < hash_size; ++i) {
        const auto b = static_cast<unsigned char>(f.data()[i]);
        hex += kHex[b >> 4];
        hex += kHex[b & 15];
      }
      shared = hex;
      f.consume(hash_size);
      left -= hash_size;
    }
    if (!f.skip(left)) return bad("zpolicy cannot read it");
  }
  if (replaced && !shared) bad("it records an entry without a name, and it is no split index");
}

}  // namespace

GitIndexLinks gitlinks_of_index(const std::string& index, size_t hash_size) {
  GitIndexLinks out;
  std::string why;
  std::optional<std::string> shared;
  {
    IndexFile f;
    if (!f.open(index, why)) {
      out.unreadable = why;
      return out;
    }
    if (f.size() == 0) return out;
    entries(f, hash_size, out, shared);
  }
  if (shared && !out.unreadable) {
    const std::string dir = index.substr(0, index.rfind('/') + 1);
    const std::string path = dir + "sharedindex." + *shared;
    IndexFile f;
    if (!f.open(path, why)) {
      out.unreadable = "its shared index '" + path + "': " + why;
    } else if (f.size() != 0) {
      std::optional<std::string> none;
      entries(f, hash_size, out, none);
    }
  }
  return out;
}

}  // namespace zpolicy::compiler
