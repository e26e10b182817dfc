#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/path_pattern.hpp"

namespace zpolicy::compiler {

// How far one expansion may go before it refuses (a clear error, never a hang): a tree
// larger than this inside a writable root is a cache or a mount that should not be
// there, and the run would not be cheap anyway.
struct WalkLimits {
  size_t max_entries = 1'000'000;  // directory entries read, over the whole walk
  size_t max_depth = 128;          // directories below the start
  size_t max_matches = 4096;       // paths matched: each becomes a mount
};

// Pattern components relative to the walk's start directory; `origin` is returned with
// each match so that the caller can say which policy line asked for it.
struct WalkPattern {
  std::vector<ir::PatternComponent> components;
  size_t origin = 0;
};

struct WalkMatch {
  std::string path;
  size_t origin = 0;
  // False for the literal last name of a pattern without `**` (`packages/*/.env` names
  // `packages/a/.env` in every existing directory `packages/a`): emitted whether it
  // exists or not, so that it is protected like any literal path.
  bool listed = true;
  // The last component is a symlink. Every directory above it was opened with
  // O_NOFOLLOW from the start, so a match that is not a link is canonical as it stands.
  bool symlink = false;
  // Spelled below a host link that leads nowhere yet (WalkOptions::created_in_writable_root):
  // not canonical (the kernel follows the link), and kept wherever it lies by name.
  bool dangling = false;
};

struct WalkResult {
  std::vector<WalkMatch> matches;
  size_t entries = 0;                // directory entries read (the cost, for bench/)
  std::optional<std::string> error;  // a limit hit, or a directory that cannot be listed
};

// Where a host link a walk follows leads: its canonical target, and whether that exists.
// `never`: the kernel's lookup of the link fails for its count of links (a loop), and
// nothing the sandbox can do changes that: nothing is there, and nothing can be made.
struct FollowedLink {
  std::string path;
  bool exists = false;
  bool never = false;
};

struct WalkOptions {
  WalkLimits limits;
  // Whether a directory may be entered (the caller prunes protected and denied
  // directories, and everything outside the writable roots).
  std::function<bool(const std::string& dir)> may_enter;
  // Whether a directory `may_enter` refuses is entered all the same where what is left of
  // every pattern there is bounded (no `**`): a host link below it may lead into a writable
  // root (a protect walk: `${HOME}/*/*/.env` with the host's `~/a/y -> WS/sub` never met the
  // link in `~/a`, outside every root, and left `WS/sub/.env` writable, which the host reads
  // as `~/a/y/.env`; red team A23B-3). Unset: never.
  std::function<bool(const std::string& dir)> may_pass;
  // Whether a match is kept (outside every writable root, a protection is moot). A match
  // that is a symlink is kept wherever it lies: what it leads to may lie in one.
  std::function<bool(const std::string& path)> keep;
  // Whether `path` lies in a writable root: a symlink there that a pattern's component (not
  // a `**`) would cross refuses the walk, as a literal policy path crossing it does (red
  // team H17-5). Unset: never.
  std::function<bool(const std::string& path)> in_writable_root;
  // Where a symlink to a directory outside the writable roots leads, when the walk follows
  // such links (under a `*`, a literal or a `**`), or nullopt with `refusal` set where it must
  // not be followed: a symlink inside a writable root on its way, which the sandbox may
  // re-point (red team A23B-2: realpath(3) followed the host's `/srv/x -> WS/l`, `WS/l` an
  // earlier run's link to `/data/d`, and `deny: [/srv/*/secret]` denied `/data/d/secret`;
  // the command re-pointed `l` at a directory of its own and made `secret` there, which the
  // host read as `/srv/x/secret`). Unset: such links are not followed.
  std::function<std::optional<FollowedLink>(const std::string& link, std::string& refusal)>
      follow_link;
  // Where the kernel would create, in a writable root (or another name the host's mounts
  // give one), what a followed host link leads to when it leads nowhere yet (dangling; also a
  // start spelled below one), or nullopt; `origin` is the pattern that meets it. The sandbox
  // could make that name, and the host would then find it at the link's. Unset: nowhere.
  std::function<std::optional<std::string>(const std::string& path, size_t origin)>
      created_in_writable_root;
  // What a walk does at such a link: refuses (a deny walk: outside the writable roots a deny
  // root cannot be held by a placeholder, so a literal deny root there refuses too), or takes
  // it for the empty directory the sandbox could make there, which holds no name yet: only
  // the names a pattern spells whether they exist or not are matched, at the link's name.
  bool refuse_dangling = false;
  // The start as the pattern's literal prefix spells it, when host links lead it to `start`
  // (empty: the same). A start that is there but no directory (a file, a FIFO) is judged at
  // this name, as a start that a dangling link spells is: the sandbox may replace it by a
  // directory where it writes (red team A23B-1).
  std::string start_spelled;
  // Whether the directory open at a descriptor looks names up case-insensitively; unset:
  // its filesystem and attribute say (compiler/resolve/casefold). Names in such a
  // directory are matched as the filesystem compares them.
  std::function<bool(int fd)> folds_case;
};

// Matches `patterns` against the tree below `start` (canonical, absolute). The walk
// opens only directories, each relative to its parent with O_NOFOLLOW|O_DIRECTORY, so it
// never follows a symlink, never opens a FIFO or device, and a directory swapped for a
// link during the walk is skipped rather than followed. It does cross into other file
// systems mounted below `start`: the sandbox can write there too. A match is never
// descended into (it is protected or denied whole). No recursion: an explicit stack.
// A directory that cannot be listed but could be written into is an error (the sandbox
// could plant a match there); one that can be neither is skipped.
WalkResult walk_tree(const std::string& start, const std::vector<WalkPattern>& patterns,
                     const WalkOptions& options);

}  // namespace zpolicy::compiler
