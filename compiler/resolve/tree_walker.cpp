#include "compiler/resolve/tree_walker.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include "compiler/resolve/casefold.hpp"
#include "ir/path.hpp"

namespace zpolicy::compiler {
namespace {

using Kind = ir::PatternComponent::Kind;

// Where one pattern stands: the index of the component the next name must match.
struct State {
  unsigned pattern = 0;
  unsigned index = 0;
  // Reached by a `**` that matches no directory here: `a/**/.env` names `a/.env` itself,
  // as the literal `a/.env` would, so that name is spelled out (protected, existing or not).
  bool zero_depth = false;
  friend bool operator==(const State&, const State&) = default;
  friend auto operator<=>(const State&, const State&) = default;
};

// The entries of one open directory. On Linux straight from getdents64 into a buffer:
// fdopendir() adds an fcntl and an fstat per directory, a third of the walk's calls.
class DirReader {
 public:
  struct Entry {
    const char* name;
    unsigned char type;  // DT_*
  };

  explicit DirReader(int fd) : fd_(fd) {
#if !defined(__linux__)
    dir_ = fdopendir(fd);
    if (dir_) fd_ = -1;  // owned by dir_ now
#endif
  }
  ~DirReader() {
#if !defined(__linux__)
    if (dir_) closedir(dir_);
#endif
    if (fd_ >= 0) close(fd_);
  }
  DirReader(DirReader&& o) noexcept { *this = std::move(o); }
  DirReader& operator=(DirReader&& o) noexcept {
    std::swap(fd_, o.fd_);
    std::swap(buf_, o.buf_);
    std::swap(len_, o.len_);
    std::swap(pos_, o.pos_);
#if !defined(__linux__)
    std::swap(dir_, o.dir_);
#endif
    return *this;
  }

  bool ok() const {
#if defined(__linux__)
    return fd_ >= 0;
#else
    return dir_ != nullptr;
#endif
  }
  int fd() const {
#if defined(__linux__)
    return fd_;
#else
    return dirfd(dir_);
#endif
  }

  // The next entry; nullopt at the end or, with `error` set to errno, on a read error.
  std::optional<Entry> next(int& error) {
#if defined(__linux__)
    if (pos_ >= len_) {
      if (!buf_) buf_ = std::make_unique<char[]>(kBufferSize);
      const ssize_t n = getdents64(fd_, buf_.get(), kBufferSize);
      if (n <= 0) {
        error = n < 0 ? errno : 0;
        return std::nullopt;
      }
      len_ = static_cast<size_t>(n);
      pos_ = 0;
    }
    const auto* d = reinterpret_cast<const dirent64*>(buf_.get() + pos_);
    pos_ += d->d_reclen;
    return Entry{d->d_name, d->d_type};
#else
    errno = 0;
    const dirent* d = readdir(dir_);
    if (!d) {
      error = errno;
      return std::nullopt;
    }
    return Entry{d->d_name, d->d_type};
#endif
  }

 private:
  static constexpr size_t kBufferSize = 32768;
  int fd_ = -1;
  std::unique_ptr<char[]> buf_;
  size_t len_ = 0, pos_ = 0;
#if !defined(__linux__)
  DIR* dir_ = nullptr;
#endif
};

// What makes a directory a repository to git's discovery (setup.c is_git_directory):
// a HEAD, an `objects` and a `refs` that access(2) finds searchable (a directory, a
// symlink git follows, even an executable file), or a `commondir` file naming where both
// are (a linked worktree's git directory). A bare repository (a test fixture, a
// `git clone --mirror`, a local remote) has no `.git`: it is one. All but the real
// directories are red team R9c-G2.
constexpr unsigned kHead = 1, kObjects = 2, kRefs = 4, kRepository = kHead | kObjects | kRefs;

struct Frame {
  DirReader dir;
  std::string path;
  std::vector<State> states;  // the states that need this directory listed
  bool folds_case = false;    // `.GIT` is what a lookup of `.git` finds here
  // A `**/.git` pattern that also names this directory when it is a repository itself
  // (red team R9-G1), and the parts of one seen so far.
  std::optional<size_t> repository_origin;
  unsigned repository_parts = 0;
};

// What entry_type() gives for a name gone since it was listed.
constexpr unsigned char kGone = DT_UNKNOWN;

constexpr int kOpenDir = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;

// The name `name` in the directory `dir`.
std::string below(const std::string& dir, std::string_view name) {
  return (dir == "/" ? "" : dir) + "/" + std::string(name);
}

class Walker {
 public:
  Walker(const std::vector<WalkPattern>& patterns, const WalkOptions& options)
      : patterns_(patterns), options_(options) {
    for (const auto& p : patterns_) {
      bool any = false;
      for (const auto& c : p.components) any |= c.kind == Kind::AnyDepth;
      any_depth_.push_back(any);
    }
  }

  WalkResult run(const std::string& start) {
    start_ = start;
    std::vector<State> states;
    for (unsigned p = 0; p < patterns_.size(); ++p) add_closure(states, {p, 0}, true);
    int fd = open(start.c_str(), kOpenDir);
    if (fd < 0) {
      // Nothing to match in a directory that is not there; the literal tails of
      // `*`-free prefixes cannot arise here (the start is the whole literal prefix). Unless
      // a dangling host link on its way lets the sandbox make it (ENOTDIR or ELOOP: the
      // start is one, which O_NOFOLLOW | O_DIRECTORY does not open).
      const int error = errno;
      if (error == EACCES && writable(AT_FDCWD, start.c_str())) unlistable(start);
      struct stat st;
      const bool no_directory =
          error == ENOTDIR && stat(start.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
      if (error == ENOENT || error == ENOTDIR || error == ELOOP)
        dangling(no_directory && !options_.start_spelled.empty() ? options_.start_spelled : start,
                 std::move(states), no_directory);
      else if (error != EACCES)
        unopenable(start, error);
      return std::move(result_);
    }
    enter(fd, start, std::move(states));
    while (!stack_.empty() && !result_.error) step();
    return std::move(result_);
  }

 private:
  const std::vector<ir::PatternComponent>& comps(const State& s) const {
    return patterns_[s.pattern].components;
  }

  // `s` and, when it is a `**`, the state after it; `entered` when `s` begins in this
  // directory (rather than being a `**` carried down from its parent).
  void add_closure(std::vector<State>& out, State s, bool entered) const {
    out.push_back(s);
    if (comps(s)[s.index].kind == Kind::AnyDepth) out.push_back({s.pattern, s.index + 1, entered});
  }

  // Whether `s` needs only its last component, a literal name, in a pattern without
  // `**` (or where its `**` matches no directory): then its match is spelled out, not
  // searched for, and exists or not. Literal
  // directories before it are searched for like wildcards, so that a spelled path never
  // needs more than its last name created.
  bool literal_tail(const State& s) const {
    const auto& c = comps(s);
    return (!any_depth_[s.pattern] || s.zero_depth) && s.index + 1 == c.size() &&
           c[s.index].kind == Kind::Literal;
  }

  // Whether each of `states` is a pattern's first component, a `**`, or what follows it
  // there: what every directory below the start is entered with.
  bool from_first_any_depth(const std::vector<State>& states) const {
    return std::all_of(states.begin(), states.end(), [&](const State& s) {
      return s.index <= 1 && comps(s).front().kind == Kind::AnyDepth;
    });
  }

  // Whether `s` is the `**` of a pattern ending `**/.git`: where it stands, git would
  // look for a repository.
  bool finds_repositories(const State& s) const {
    const auto& c = comps(s);
    return c[s.index].kind == Kind::AnyDepth && s.index + 2 == c.size() &&
           c[s.index + 1].kind == Kind::Literal && c[s.index + 1].pieces.front() == ".git";
  }

  // Which part of a repository the entry `e` of `f` is, if any (0).
  unsigned repository_part(const Frame& f, const DirReader::Entry& e) {
    // In a folding directory as names are looked up there: `objectſ` (LONG S) is what
    // git's lookup of `objects` finds (red team R9c-C2).
    auto is = [&](const char* want) {
      if (!f.folds_case) return std::strcmp(e.name, want) == 0;
      const ir::PatternComponent literal{ir::PatternComponent::Kind::Literal, {want}};
      return matches_folded(literal, e.name);
    };
    const unsigned part = is("HEAD")        ? kHead
                          : is("objects")   ? kObjects
                          : is("refs")      ? kRefs
                          : is("commondir") ? kObjects | kRefs
                                            : 0;
    // Any `objects` or `refs` counts, whatever its type or mode now: a protection too
    // many is a read-only name.
    if (part == kObjects || part == kRefs) return part;
    if (!part) return 0;
    // As git's validate_headref takes HEAD: a symlink is read (old repositories), anything
    // else opened and read, a FIFO or a device too (a writer or the device may give it a
    // ref); a directory reads nothing and a socket does not open. The same for `commondir`,
    // read through a link.
    const auto type = entry_type(f, e);
    return type && *type != DT_DIR && *type != DT_SOCK && *type != kGone ? part : 0;
  }

  // What the entry `e` of `f` is (DT_*). A filesystem that does not say (DT_UNKNOWN: ext2
  // without its `filetype` feature, iso9660, minix) has it looked up, its real type given as
  // the listing of any other filesystem gives it (a FIFO was DT_REG there, and counted as a
  // HEAD where a listing's DT_FIFO did not: tidy 25), and a lookup that fails is
  // judged as an open that fails: skipped, a `.git` in a directory of the caller's that it
  // could list but not search went unmatched, and only hard_links' closing of that
  // directory kept the sandbox (the caller's uid) from making it searchable and writing
  // the hooks. kGone when the name is gone since it was listed, as a literal tail that
  // is not there; nullopt when it cannot be looked up, with result_.error set unless the
  // sandbox cannot reach it either.
  std::optional<unsigned char> entry_type(const Frame& f, const DirReader::Entry& e) {
    if (e.type != DT_UNKNOWN) return e.type;
    struct stat st;
    if (fstatat(f.dir.fd(), e.name, &st, AT_SYMLINK_NOFOLLOW) == 0) return IFTODT(st.st_mode);
    const int error = errno;
    if (error == ENOENT) return kGone;
    const std::string path = below(f.path, e.name);
    if (error != EACCES)
      unopenable(path, error, "look up");
    else if (!passed_through(path) && writable(f.dir.fd(), e.name))
      result_.error = "cannot look up '" + path +
                      "' in a directory the sandbox could make searchable; a pattern cannot "
                      "be checked there";
    return std::nullopt;
  }

  // Whether the sandbox could write into a directory the walk cannot list: it may now, or
  // it owns the directory, or the one holding it, and so may chmod it (mode 0111, 0000 or
  // a parent of 0644 of the caller's own hid a nested repository from `**/.git`, and the
  // sandbox made it 0755 and planted a hook: red team H17-3). The sandbox keeps the
  // caller's uid and holds no capability.
  static bool writable(int dirfd, const char* name) {
    if (faccessat(dirfd, name, W_OK | X_OK, AT_EACCESS) == 0) return true;
    struct stat st;
    if (fstatat(dirfd, name, &st, 0) == 0) return st.st_uid == geteuid();
    // Not even looked up: the directory holding it is not searchable (mode 0644, 0400),
    // and the sandbox may chmod that one if it is the caller's.
    return errno == EACCES && fstat(dirfd, &st) == 0 && st.st_uid == geteuid();
  }

  void unlistable(const std::string& path) {
    result_.error = "cannot list '" + path +
                    "', which the sandbox could write into; a pattern cannot be checked there";
  }

  // An open (`action`) that failed for want of a resource or with an I/O error (EMFILE,
  // ENOMEM, EIO): what lies there is unknown, not nothing (review 23: a pattern matched
  // nothing).
  void unopenable(const std::string& path, int error, const char* action = "open") {
    result_.error = std::string("cannot ") + action + " '" + path + "': " + std::strerror(error) +
                    "; a pattern cannot be checked there";
  }

  void add_match(std::string path, size_t origin, bool listed, bool symlink,
                 bool through_dangling = false) {
    if (!through_dangling && !symlink && options_.keep && !options_.keep(path)) return;
    if (result_.matches.size() >= options_.limits.max_matches) {
      result_.error = "more than " + std::to_string(options_.limits.max_matches) +
                      " paths match; narrow the pattern";
      return;
    }
    result_.matches.push_back({std::move(path), origin, listed, symlink, through_dangling});
  }

  // One state per (pattern, index); spelled out if any way of reaching it says so.
  static std::vector<State> unique_states(std::vector<State> states) {
    std::sort(states.begin(), states.end());
    std::vector<State> unique;
    for (const auto& s : states) {
      if (!unique.empty() && unique.back().pattern == s.pattern && unique.back().index == s.index)
        unique.back().zero_depth |= s.zero_depth;
      else
        unique.push_back(s);
    }
    return unique;
  }

  // `path`, a host link that leads nowhere yet or a start spelled below one, where `states`
  // go on: the sandbox may make what it leads to (red team A22C notes: `deny:
  // [/srv/*/secret]` with the host's dangling `/srv/x -> WS/new` matched nothing, and the
  // command made `new/secret`, which the host then read as `/srv/x/secret`). Refused, or
  // taken for the empty directory the kernel would create (WalkOptions::refuse_dangling).
  // `no_directory`: the link leads to something that is there but no directory (a file, a
  // FIFO, a socket), which the sandbox can replace by one just as it can make a missing name
  // (red team A23B-1: `srv/x -> WS/file` let the command swap `file` for a directory and
  // make `file/secret`, which the host read as the denied `srv/x/secret`).
  void dangling(const std::string& path, std::vector<State> states, bool no_directory = false) {
    if (!options_.created_in_writable_root || states.empty()) return;
    states = unique_states(std::move(states));
    const auto made =
        options_.created_in_writable_root(path, patterns_[states.front().pattern].origin);
    if (!made) return;
    if (options_.refuse_dangling) {
      result_.error =
          no_directory
              ? "'" + path + "' leads through a symlink to '" + *made +
                    "', which is no directory and which the sandbox can replace by one: it "
                    "could make there what the host then reads below '" +
                    path + "' as denied; remove or re-point the link"
              : "'" + path + "' leads through a dangling symlink to '" + *made +
                    "', which the sandbox can create: it could make there what the host then "
                    "reads below '" +
                    path + "' as denied; remove or re-point the link, or create '" + *made +
                    "' so that the pattern is matched there";
      return;
    }
    for (const auto& s : states)
      if (literal_tail(s))
        add_match(below(path, comps(s)[s.index].pieces.front()), patterns_[s.pattern].origin, false,
                  false, true);
  }

  // Whether `dir` is entered with `states` (WalkOptions::may_enter, may_pass).
  bool may_enter(const std::string& dir, const std::vector<State>& states) const {
    if (!passed_through(dir)) return true;
    if (!options_.may_pass || !options_.may_pass(dir)) return false;
    return std::none_of(states.begin(), states.end(), [&](const State& s) {
      const auto& c = comps(s);
      return std::any_of(c.begin() + s.index, c.end(),
                         [](const ir::PatternComponent& p) { return p.kind == Kind::AnyDepth; });
    });
  }

  // Whether `dir` is one `may_enter` refuses, entered (if at all) only to look for host
  // links: outside every writable root, so one the walk cannot list is nothing the sandbox
  // could write into.
  bool passed_through(const std::string& dir) const {
    return options_.may_enter && !options_.may_enter(dir);
  }

  // Takes ownership of `fd`.
  void enter(int fd, const std::string& path, std::vector<State> states) {
    states = unique_states(std::move(states));
    std::vector<State> listed;
    for (const auto& s : states) {
      if (!literal_tail(s)) {
        listed.push_back(s);
        continue;
      }
      const std::string& name = comps(s)[s.index].pieces.front();
      struct stat st;
      const bool link =
          fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      add_match(below(path, name), patterns_[s.pattern].origin, false, link);
    }
    if (listed.empty() || result_.error) {
      close(fd);
      return;
    }
    if (stack_.size() >= options_.limits.max_depth) {
      close(fd);
      result_.error = "'" + path + "' is more than " + std::to_string(options_.limits.max_depth) +
                      " directories deep";
      return;
    }
    const bool folds = options_.folds_case ? options_.folds_case(fd) : folds_case(fd);
    std::optional<size_t> repository_origin;
    for (const auto& s : listed)
      if (finds_repositories(s)) repository_origin = patterns_[s.pattern].origin;
    DirReader dir(fd);
    if (!dir.ok()) {
      unlistable(path);
      return;
    }
    stack_.push_back({std::move(dir), path, std::move(listed), folds, repository_origin, 0});
  }

  // Reads one entry of the innermost directory (or leaves it when done).
  void step() {
    Frame& f = stack_.back();
    int error = 0;
    const auto e = f.dir.next(error);
    if (!e) {
      leave(error);
      return;
    }
    const std::string_view name = e->name;
    if (name == "." || name == "..") return;
    if (f.repository_origin) f.repository_parts |= repository_part(f, *e);
    if (result_.error) return;
    if (++result_.entries > options_.limits.max_entries) {
      result_.error = "more than " + std::to_string(options_.limits.max_entries) +
                      " entries below the pattern's start; narrow the pattern or move large "
                      "trees out of the writable root";
      return;
    }
    Taken taken = take(f, name);
    if (!taken.matched && taken.next.empty()) return;
    const auto type = entry_type(f, *e);
    if (!type) return;
    std::string path = below(f.path, name);
    if (taken.matched) {
      // Protected or denied whole: nothing below it needs a rule of its own.
      add_match(std::move(path), *taken.matched, true, *type == DT_LNK);
      return;
    }
    // `packages/*/.env` names `packages/x/.env` through a link `packages/x -> ../libs/x`
    // exactly as the literal `packages/x/.env` does, which refuses the run; skipping the link
    // left `libs/x/.env`, outside what the pattern walks, writable under that name (red team
    // H17-5). A `**` alone goes on below the link's target under its own name, if it lies in
    // what is walked.
    if (*type == DT_LNK) {
      const bool in_root = options_.in_writable_root && options_.in_writable_root(path);
      if (in_root && taken.named) {
        result_.error = "'" + path +
                        "' is a symlink inside a writable root that the pattern would cross; "
                        "name its target instead";
        return;
      }
      if (!in_root && options_.follow_link) follow(path, std::move(taken));
      return;
    }
    if (*type == DT_DIR) descend(f.dir.fd(), e->name, path, std::move(taken.next));
  }

  // Leaves the innermost directory after its last entry, or after `error` (errno) ended
  // its listing.
  void leave(int error) {
    const Frame& f = stack_.back();
    if (error) unopenable(f.path, error, "list");
    // A repository itself: protected whole, as its `.git` would be.
    if (!error && f.repository_origin && f.repository_parts == kRepository)
      add_match(f.path, *f.repository_origin, true, false);
    stack_.pop_back();
  }

  // What the states of a directory make of one of its names.
  struct Taken {
    std::vector<State> next;        // the states that go on below it
    std::optional<size_t> matched;  // the origin of a pattern it ends
    bool named = false;             // a component of a pattern, not a `**`, took it and goes on
  };

  Taken take(const Frame& f, std::string_view name) const {
    Taken taken;
    for (const State& s : f.states) {
      const auto& c = comps(s);
      if (c[s.index].kind == Kind::AnyDepth) {
        add_closure(taken.next, s, false);
      } else if (f.folds_case ? matches_folded(c[s.index], name) : c[s.index].matches(name)) {
        if (s.index + 1 == c.size()) {
          if (!taken.matched) taken.matched = patterns_[s.pattern].origin;
        } else {
          add_closure(taken.next, {s.pattern, s.index + 1}, true);
          taken.named = true;
        }
      }
    }
    return taken;
  }

  // The host link `link`, outside the writable roots, where `taken` goes on. A link there is
  // host layout, which a literal deny path follows: `deny: [/srv/*/secret]` or
  // `/srv/**/secret` with `/srv/x -> /data/x` denies /data/x/secret as `/srv/x/secret` does
  // (H17-6). Walked at its target's name, each target once; what it holds counts against
  // the limits.
  void follow(const std::string& link, Taken taken) {
    std::string refusal;
    std::optional<FollowedLink> to = options_.follow_link(link, refusal);
    // Refused under a `**` alone too, wherever the link leads now: the link inside a
    // writable root on its way is the sandbox's to re-point. Skipped where it led into
    // the start, `deny: [/srv/**/secret]` with the host's `/srv/x -> WS/l` and `WS/l`
    // an earlier run's link to `/srv/y` ran; the command re-pointed `l` at a
    // directory of its own holding `secret`, which the host read as `/srv/x/secret`
    // (red team A23C-2).
    if (!to) {
      result_.error = refusal;
      return;
    }
    if (to->never) return;
    if (!to->exists) {
      // Nothing there yet; the sandbox may be able to make it.
      dangling(link, std::move(taken.next));
      return;
    }
    const std::string target = std::move(to->path);
    // Under a `**` alone, an ancestor of the start (`~/.wine/dosdevices/z: -> /`) would
    // walk it again, and what lies below the start is walked at its own name with these
    // states where each `**` is its pattern's first component. Not where a component
    // comes before it: with the host's `srv/ax/l -> srv/other`, `deny:
    // [srv/*x/**/secret]` never walked `other` with the `**` (`other` is no `*x`), and
    // the command read `srv/other/secret` as `srv/ax/l/secret` (red team A24-2).
    if (!taken.named && ((target != start_ && ir::path_within(target, start_)) ||
                         (ir::path_within(start_, target) && from_first_any_depth(taken.next))))
      return;
    if (!may_enter(target, taken.next)) return;
    const int fd = open(target.c_str(), kOpenDir);
    if (fd < 0) {
      const int error = errno;
      if (error == EACCES && !passed_through(target) && writable(AT_FDCWD, target.c_str()))
        unlistable(target);
      // There, but no directory: where the sandbox writes, it may make it one.
      if (error == ENOTDIR)
        dangling(link, std::move(taken.next), true);
      else if (error != EACCES && error != ENOENT && error != ELOOP)
        unopenable(target, error);
      return;
    }
    // Each target once per state: two links to one directory met with different states
    // each need it walked with theirs. By the target alone, `deny: [srv/*/*/secret]`
    // with the host's `srv/p/q -> data/d` and `srv/r -> data/d` walked `d` for the link
    // met first only, and the command read `data/d/X/secret` as `srv/r/X/secret` (red
    // team A24-1).
    std::vector<State> next = unique_states(std::move(taken.next));
    if (struct stat st; fstat(fd, &st) == 0)
      std::erase_if(next, [&](const State& s) {
        return !followed_.insert({st.st_dev, st.st_ino, s}).second;
      });
    if (next.empty()) {
      close(fd);
      return;
    }
    enter(fd, target, std::move(next));
  }

  // The directory `name` of the directory open at `parent`, where `next` go on.
  void descend(int parent, const char* name, const std::string& path, std::vector<State> next) {
    if (!may_enter(path, next)) return;
    int fd = openat(parent, name, kOpenDir);
    if (fd < 0) {
      // ENOTDIR/ELOOP: swapped for something else since it was listed; not followed.
      const int error = errno;
      if (error == EACCES && !passed_through(path) && writable(parent, name))
        unlistable(path);
      else if (error != EACCES && error != ENOENT && error != ENOTDIR && error != ELOOP)
        unopenable(path, error);
      return;
    }
    enter(fd, path, std::move(next));
  }

  const std::vector<WalkPattern>& patterns_;
  const WalkOptions& options_;
  std::vector<bool> any_depth_;
  std::vector<Frame> stack_;
  std::string start_;
  std::set<std::tuple<dev_t, ino_t, State>> followed_;  // link targets entered, by state
  WalkResult result_;
};

}  // namespace

WalkResult walk_tree(const std::string& start, const std::vector<WalkPattern>& patterns,
                     const WalkOptions& options) {
  if (patterns.empty()) return {};
  return Walker(patterns, options).run(start);
}

}  // namespace zpolicy::compiler
