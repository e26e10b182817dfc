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

namespace zpolicy::compiler {

namespace {

constexpr uint32_t kGitlink = 0160000, kTypeMask = 0170000, kDirectory = 0040000;
constexpr uint16_t kExtended = 0x4000;

// An index larger than this refuses the run unread: zpolicy holds an index in memory while
// it reads it, and an index a sandbox wrote (a nested repository's, made in an earlier run)
// can be any size: a sparse file costs no disk (red team R17-2: `truncate -s 3G
// n/.git/index` made the next run read 3 GiB of zeros for 38 s, then die of bad_alloc
// under a 4 GB address-space limit). 256 MiB is some 2.5 million entries of version 2;
// with the shared index of a split index, at most twice that is held.
constexpr off_t kIndexLimit = off_t{256} << 20;

// The index file's bytes, read as the config files are (lstat, O_NOFOLLOW, fstat); none,
// with `why`, when it is not a regular file, is over kIndexLimit, or cannot be read; ""
// when missing.
std::optional<std::string> read_index(const std::string& path, std::string& why) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::string();
    why = "zpolicy cannot look at it";
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    why = "it is not a regular file";
    return std::nullopt;
  }
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    why = "zpolicy cannot read it";
    return std::nullopt;
  }
  // What was opened, not what lstat saw: a FIFO put in its place since reads as empty,
  // which would be an index without gitlinks.
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    why = "it is not a regular file";
    return std::nullopt;
  }
  const auto too_large = [&] {
    close(fd);
    why =
        "it is larger than " + std::to_string(kIndexLimit >> 20) + " MiB, more than zpolicy reads";
    return std::nullopt;
  };
  if (st.st_size > kIndexLimit) return too_large();
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      why = "zpolicy cannot read it";
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    // It grew while it was read.
    if (text.size() > static_cast<size_t>(kIndexLimit)) return too_large();
  }
  close(fd);
  return text;
}

uint32_t be32(const std::string& s, size_t at) {
  return static_cast<uint32_t>(static_cast<unsigned char>(s[at])) << 24 |
         static_cast<uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

// varint.c's decode_varint; none on overflow or past the end.
std::optional<uint64_t> varint(const std::string& s, size_t& at) {
  if (at >= s.size()) return std::nullopt;
  unsigned char c = static_cast<unsigned char>(s[at++]);
  uint64_t v = c & 127;
  while (c & 128) {
    ++v;
    if (v == 0 || (v >> 57) != 0 || at >= s.size()) return std::nullopt;
    c = static_cast<unsigned char>(s[at++]);
    v = (v << 7) + (c & 127);
  }
  return v;
}

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

// The entries of one index file; `shared`: the hash a `link` extension names, if any.
void entries(const std::string& s, size_t hash_size, GitIndexLinks& out,
             std::optional<std::string>& shared) {
  auto bad = [&](const std::string& why) {
    if (!out.unreadable) out.unreadable = why;
  };
  if (s.size() < 12 + hash_size || s.compare(0, 4, "DIRC") != 0) return bad("it is not a git index");
  const uint32_t version = be32(s, 4), count = be32(s, 8);
  if (version < 2 || version > 4) return bad("its version " + std::to_string(version) + " is not one zpolicy reads");
  const size_t end = s.size() - hash_size;  // the trailing checksum
  const size_t fixed = 40 + hash_size + 2;  // stat data, mode, ids, size, hash, flags
  size_t at = 12;
  std::string name;
  for (uint32_t k = 0; k < count; ++k) {
    if (at + fixed > end) return bad("it is cut short");
    const size_t start = at;
    const uint32_t mode = be32(s, at + 24);
    const auto flags = static_cast<uint16_t>(static_cast<unsigned char>(s[at + fixed - 2]) << 8 |
                                             static_cast<unsigned char>(s[at + fixed - 1]));
    at += fixed;
    if (version >= 3 && (flags & kExtended)) at += 2;
    if (version == 4) {
      const auto strip = varint(s, at);
      if (!strip || *strip > name.size()) return bad("it is cut short");
      name.resize(name.size() - *strip);
    } else {
      name.clear();
    }
    const size_t nul = s.find('\0', at);
    if (nul == std::string::npos || nul >= end) return bad("it is cut short");
    name.append(s, at, nul - at);
    at = nul + 1;
    // Versions 2 and 3 pad each entry with 1 to 8 NULs to a multiple of 8.
    if (version != 4) at = start + ((at - 1 - start + 8) & ~size_t{7});
    if ((mode & kTypeMask) == kDirectory)
      return bad("it is a sparse index: '" + name + "' stands for the paths below it");
    if ((mode & kTypeMask) == kGitlink && !git_writes(name))
      return bad("it records the submodule '" + name + "', a path git never writes");
    if ((mode & kTypeMask) == kGitlink) out.paths.push_back(name);
  }
  // Extensions: a 4-byte signature and a 4-byte size each.
  while (at + 8 <= end) {
    const std::string sig = s.substr(at, 4);
    const uint32_t size = be32(s, at + 4);
    if (size > end - at - 8) return bad("it is cut short");
    if (sig == "link" && size >= hash_size) {
      static constexpr char kHex[] = "0123456789abcdef";
      std::string hex;
      for (size_t i = 0; i < hash_size; ++i) {
        const auto b = static_cast<unsigned char>(s[at + 8 + i]);
        hex += kHex[b >> 4];
        hex += kHex[b & 15];
      }
      shared = hex;
    }
    at += 8 + size;
  }
}

}  // namespace

GitIndexLinks gitlinks_of_index(const std::string& index, size_t hash_size) {
  GitIndexLinks out;
  std::string why;
  const auto text = read_index(index, why);
  if (!text) {
    out.unreadable = why;
    return out;
  }
  if (text->empty()) return out;
  std::optional<std::string> shared;
  entries(*text, hash_size, out, shared);
  if (shared && !out.unreadable) {
    const std::string dir = index.substr(0, index.rfind('/') + 1);
    const std::string path = dir + "sharedindex." + *shared;
    const auto shared_text = read_index(path, why);
    if (!shared_text) {
      out.unreadable = "its shared index '" + path + "': " + why;
    } else if (!shared_text->empty()) {
      std::optional<std::string> none;
      entries(*shared_text, hash_size, out, none);
    }
  }
  return out;
}

}  // namespace zpolicy::compiler
