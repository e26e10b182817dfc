#include "compiler/resolve/tree_walker.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace zpolicy::compiler {
namespace {

using Kind = ir::PatternComponent::Kind;

// Where one pattern stands: the index of the component the next name must match.
struct State {
  unsigned pattern = 0;
  unsigned index = 0;
  friend bool operator==(const State&, const State&) = default;
  friend auto operator<=>(const State&, const State&) = default;
};

struct DirCloser {
  void operator()(DIR* d) const { closedir(d); }
};

struct Frame {
  std::unique_ptr<DIR, DirCloser> dir;
  std::string path;
  std::vector<State> states;  // the states that need this directory listed
};

constexpr int kOpenDir = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;

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
    std::vector<State> states;
    for (unsigned p = 0; p < patterns_.size(); ++p) add_closure(states, {p, 0});
    int fd = open(start.c_str(), kOpenDir);
    if (fd < 0) {
      // Nothing to match in a directory that is not there; the literal tails of
      // `*`-free prefixes cannot arise here (the start is the whole literal prefix).
      if (errno == EACCES && writable(AT_FDCWD, start.c_str())) unlistable(start);
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

  void add_closure(std::vector<State>& out, State s) const {
    out.push_back(s);
    if (comps(s)[s.index].kind == Kind::AnyDepth) out.push_back({s.pattern, s.index + 1});
  }

  // Whether `s` needs only its last component, a literal name, in a pattern without
  // `**`: then its match is spelled out, not searched for, and exists or not. Literal
  // directories before it are searched for like wildcards, so that a spelled path never
  // needs more than its last name created.
  bool literal_tail(const State& s) const {
    const auto& c = comps(s);
    return !any_depth_[s.pattern] && s.index + 1 == c.size() && c[s.index].kind == Kind::Literal;
  }

  static bool writable(int dirfd, const char* name) {
    return faccessat(dirfd, name, W_OK | X_OK, AT_EACCESS) == 0;
  }

  void unlistable(const std::string& path) {
    result_.error = "cannot list '" + path +
                    "', which the sandbox could write into; a pattern cannot be checked there";
  }

  void add_match(std::string path, size_t origin, bool listed) {
    if (options_.keep && !options_.keep(path)) return;
    if (result_.matches.size() >= options_.limits.max_matches) {
      result_.error = "more than " + std::to_string(options_.limits.max_matches) +
                      " paths match; narrow the pattern";
      return;
    }
    result_.matches.push_back({std::move(path), origin, listed});
  }

  // Takes ownership of `fd`.
  void enter(int fd, const std::string& path, std::vector<State> states) {
    std::sort(states.begin(), states.end());
    states.erase(std::unique(states.begin(), states.end()), states.end());
    std::vector<State> listed;
    for (const auto& s : states) {
      if (!literal_tail(s)) {
        listed.push_back(s);
        continue;
      }
      add_match((path == "/" ? "/" : path + "/") + comps(s)[s.index].pieces.front(),
                patterns_[s.pattern].origin, false);
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
    DIR* d = fdopendir(fd);
    if (!d) {
      close(fd);
      unlistable(path);
      return;
    }
    stack_.push_back({std::unique_ptr<DIR, DirCloser>(d), path, std::move(listed)});
  }

  // Reads one entry of the innermost directory (or leaves it when done).
  void step() {
    Frame& f = stack_.back();
    errno = 0;
    dirent* e = readdir(f.dir.get());
    if (!e) {
      if (errno != 0) unlistable(f.path);
      stack_.pop_back();
      return;
    }
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") return;
    if (++result_.entries > options_.limits.max_entries) {
      result_.error = "more than " + std::to_string(options_.limits.max_entries) +
                      " entries below the pattern's start; narrow the pattern or move large "
                      "trees out of the writable root";
      return;
    }
    std::vector<State> next;
    std::optional<size_t> matched;
    for (const State& s : f.states) {
      const auto& c = comps(s);
      if (c[s.index].kind == Kind::AnyDepth) {
        add_closure(next, s);
      } else if (c[s.index].matches(name)) {
        if (s.index + 1 == c.size()) {
          if (!matched) matched = patterns_[s.pattern].origin;
        } else {
          add_closure(next, {s.pattern, s.index + 1});
        }
      }
    }
    if (!matched && next.empty()) return;
    std::string path = f.path == "/" ? "/" + std::string(name) : f.path + "/" + std::string(name);
    if (matched) {
      // Protected or denied whole: nothing below it needs a rule of its own.
      add_match(std::move(path), *matched, true);
      return;
    }
    unsigned char type = e->d_type;
    const int parent = dirfd(f.dir.get());
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (fstatat(parent, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) return;
      type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
    }
    if (type != DT_DIR) return;
    if (options_.may_enter && !options_.may_enter(path)) return;
    int fd = openat(parent, e->d_name, kOpenDir);
    if (fd < 0) {
      // ENOTDIR/ELOOP: swapped for something else since it was listed; not followed.
      if (errno == EACCES && writable(parent, e->d_name)) unlistable(path);
      return;
    }
    enter(fd, path, std::move(next));
  }

  const std::vector<WalkPattern>& patterns_;
  const WalkOptions& options_;
  std::vector<bool> any_depth_;
  std::vector<Frame> stack_;
  WalkResult result_;
};

}  // namespace

WalkResult walk_tree(const std::string& start, const std::vector<WalkPattern>& patterns,
                     const WalkOptions& options) {
  if (patterns.empty()) return {};
  return Walker(patterns, options).run(start);
}

}  // namespace zpolicy::compiler
