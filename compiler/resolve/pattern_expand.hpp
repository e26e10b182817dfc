#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/resolve/tree_walker.hpp"
#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// Portable resolution of the `protect` and `deny` patterns: each stays one symbolic
// entry, spelled as the policy spells it below its anchor ("${WORKSPACE}/**/.git"). A
// '*' never occurs in a portable path otherwise (the frontend refuses it in literal
// paths), so the entry is unambiguous in bwrap.args, profile.sb and params.txt.
void add_portable_patterns(const ir::Policy& policy, ir::Resolved& r);

// How resolve binds a pattern's literal prefix to the host: `bind` anchors it
// ("${WORKSPACE}/packages" -> "/home/u/proj/packages"), `canonical` canonicalizes a
// lexical host path or refuses it (diagnosed at `loc`) as every protected path is.
struct HostBinding {
  std::function<std::string(const ir::PolicyPath&)> bind;
  std::function<std::optional<std::string>(const std::string& lexical, const ir::SourceLoc& loc)>
      canonical;
  // Where the kernel would create the missing `path`, spelled from a dangling host link, in a
  // writable root or another name the host's mounts give one (every link it leads through
  // followed in turn), or nullopt; a walk that refuses on the way is diagnosed at `loc`.
  std::function<std::optional<std::string>(const std::string& path, const ir::SourceLoc& loc)>
      created_in_writable_root;
  // Where a host link a pattern's walk meets leads (WalkOptions::follow_link).
  std::function<std::optional<FollowedLink>(const std::string& link, std::string& refusal)>
      follow_link;
};

// A path a pattern names on this host, with the policy line of the pattern.
struct PatternHit {
  std::string path;
  ir::SourceLoc loc;
  // Found by the walk through real directories and not a symlink itself: canonical as
  // it stands, so resolve need not walk it again (a symlink is refused there).
  bool canonical = false;
};

// The paths the `protect` patterns name below the writable roots of `r` (resolved
// already, with the literal protect and deny paths): what exists and matches, plus the
// literal tails of `*`-only patterns. `roots` are the writable roots and every other name
// the host's mounts give them or a part of them: an absolute pattern below such a name
// names what the sandbox writes there (red team A21C-1). The walk never enters a directory
// that is protected or denied already, nor one outside and not above every root. A host
// link outside the roots is followed (the host reads through it); one that leads nowhere
// yet, where the kernel would create what it leads to in a root, is taken for the empty
// directory the sandbox could make: its literal tails are spelled at the link's name (not
// canonical: resolve protects them where the kernel would create them).
// Nullopt (diagnosed) when a walk hits a limit.
std::optional<std::vector<PatternHit>> expand_protect_patterns(const ir::Policy& policy,
                                                               const ir::Resolved& r,
                                                               const std::vector<ir::ResolvedPath>& roots,
                                                               const HostBinding& host,
                                                               ir::Diagnostics& diags,
                                                               const WalkLimits& limits = {});

// The paths the `deny` patterns name, anywhere below their literal prefix; the walk
// never enters a directory that is denied already (it may enter protected ones: a
// protected directory is still readable, and a deny there must hold). A host link (or the
// literal prefix) that leads nowhere yet, where the kernel would create what it leads to in
// a writable root, refuses (diagnosed): the sandbox could make a denied name there.
std::optional<std::vector<PatternHit>> expand_deny_patterns(const ir::Policy& policy,
                                                            const ir::Resolved& r,
                                                            const HostBinding& host,
                                                            ir::Diagnostics& diags,
                                                            const WalkLimits& limits = {});

}  // namespace zpolicy::compiler
