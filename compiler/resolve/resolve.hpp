#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "compiler/resolve/caller_environment.hpp"
#include "compiler/resolve/mount_names.hpp"
#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// The operating system whose filesystem the facts describe. Bound artifacts name that
// filesystem's paths, so a target is bound only on a host of its own system.
enum class HostOs { Linux, Macos, Other };

// The host facts a policy is bound to. Gathered in one place (host_facts) so that
// resolution itself is reproducible in tests with made-up facts.
struct HostFacts {
  std::string workspace;  // canonical
  std::string home;
  std::string tmpdir;
  std::string cwd;  // canonical current directory
  HostOs os = HostOs::Other;
  // zpolicy's own state (compiler/resolve/state_dir.hpp), hidden from every sandbox;
  // empty where runs keep no state (macOS).
  std::string state_dir = {};
  // The object `workspace` named when it was canonicalized: what the lints judge and
  // what resolution must find again (a workspace swapped in between is refused).
  std::optional<ir::HostIdentity> workspace_identity = {};
  // The mount table of the host (Linux), as the caller read it: `run` reads it once, from
  // the one descriptor it re-reads when bwrap has set the sandbox up (red team A11-4), and
  // its lints and state directory check judge the same table. None: resolution reads
  // /proc/self/mountinfo itself when a path needs it.
  std::optional<std::vector<MountEntry>> mounts = {};
  // The caller's environment, which names what the host's programs run after the sandbox
  // is gone ($PATH, $GIT_DIR, the git configuration files) and the facts above ($HOME,
  // $TMPDIR, $PWD). Resolution reads it from here only; empty in made-up facts.
  CallerEnvironment environment = {};
  // The workspace as the caller spelled it, where that is another name of the same
  // directory through host links: $PWD when the workspace is the current directory (or
  // given relative to it), `cd mono/app` with the host's `mono/app -> /data/app`. Absolute,
  // without '.' or '..'; empty when it is the canonical path or names another object.
  // The repositories above it are read too (red team A23C-4).
  std::string workspace_spelled = {};
};

// The part of the absolute `path` up to its first component that is a symbolic link on
// this host ("/var/run" of "/var/run/x" where /var/run -> /run), if any. The walk ends at
// the first component that is missing. For `verify` of a bound bwrap.args: bwrap resolves
// a bind's source on the host, following such links, and the verifier takes the path as
// written.
std::optional<std::string> host_link_on_the_way(const std::string& path);

// Reads $HOME (or the password database), $TMPDIR (or /tmp) and $PWD of `environment`, the
// current directory, the operating system, where zpolicy's state lives, and canonicalizes
// the workspace (default: the current directory). `environment` is kept in the facts.
std::optional<HostFacts> host_facts(const std::optional<std::string>& workspace,
                                    CallerEnvironment environment, ir::Diagnostics& diags);

// The same with this process's environment, read once here.
std::optional<HostFacts> host_facts(const std::optional<std::string>& workspace,
                                    ir::Diagnostics& diags);

// The mode a run gets: the requested one, which may only narrow the policy's ceiling.
std::optional<ir::Mode> effective_mode(const ir::Policy& policy,
                                       const std::optional<ir::Mode>& requested,
                                       ir::Diagnostics& diags);

// Portable resolution: variables stay symbolic, nothing on the host is looked at. None,
// with a located error, for a policy over the pin budget (kMaxPinnedBytes), as
// resolve_for_host: every way a policy is resolved (compile, verify, explain, run, and
// the review's diff and check --within) refuses it alike.
std::optional<ir::Resolved> resolve_portable(const ir::Policy& policy, ir::Mode mode,
                                             ir::Diagnostics& diags);

// Binds the policy to a host: canonical paths, host kinds, `.git` pointer files, and
// refusal (located diagnostics) of protected or deny paths that cross a symlink inside
// a writable root. A path is canonical when every symlink of its longest existing
// prefix is resolved (/tmp -> /private/tmp on macOS, a symlinked workspace -> its
// target); the part that does not exist yet follows as spelled, and a '..' in that part
// is refused (nothing on disk says what it would mean). Every bound path that exists
// gets the identity of the object it names; a writable root `${WORKSPACE}` that is not
// the object host_facts saw is refused. Looks at the filesystem (the one it runs on,
// whatever the system) but never changes it.
std::optional<ir::Resolved> resolve_for_host(const ir::Policy& policy, ir::Mode mode,
                                             const HostFacts& host, ir::Diagnostics& diags);

// Issue 19 §2: every protected or deny path inside a writable root has each directory
// between them pinned, so the pins' path bytes grow with the square of a path's depth
// (1 000 paths 400 components deep: 69 s and 2.4 GB). Above this many bytes of pinned
// path names (counted before duplicates go) a policy is refused; the goldens and
// bench/scale.sh's 20 000 paths stay below it (docs/verify.md, "Bounded inputs").
inline constexpr size_t kMaxPinnedBytes = size_t{4} << 20;

// The paths `run` makes exist before bwrap starts (runner/placeholders): pins, protected
// paths and deny paths inside writable roots, shallowest first.
std::vector<ir::ResolvedPath*> placeholder_candidates(ir::Resolved& r);

// `r` as `run` will execute it: every missing candidate marked as the empty directory the
// runner creates for it. `compile --workspace` uses this so that its output is exactly
// what runs.
void assume_placeholders(ir::Resolved& r);

}  // namespace zpolicy::compiler
