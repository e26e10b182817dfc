#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace zpolicy::runner {

// A sandbox's inotify instances and watches are charged to its caller: each user
// namespace's counts are checked against its own limits and then, as the namespace's
// owner, against those of every ancestor (kernel/ucount.c). A command that opened
// instances until refused took all of the caller's `fs.inotify.max_user_instances`, and
// every other run of that user, which needs one to watch its protected names on the host,
// refused (red team R8-L2). The sandbox's own user namespace has limits of its own,
// `user.max_inotify_instances` and `user.max_inotify_watches`, which bwrap leaves at the
// maximum: before the command starts they are lowered to a share of the caller's, so that
// the caller keeps the rest (docs/run.md "inotify: the sandbox's share").

// The share of each of the caller's limits one sandbox gets: a quarter.
inline constexpr long kInotifyShareDivisor = 4;

// The limits a sandbox gets: a quarter of each of the caller's.
struct InotifyShare {
  long instances = 0;  // user.max_inotify_instances
  long watches = 0;    // user.max_inotify_watches
};

// The share of this caller's limits; nullopt when they cannot be read (the run refuses).
std::optional<InotifyShare> sandbox_inotify_share();

// Sets `share` in the user namespace that owns `init`'s network namespace (the sandbox's
// outermost one, which the command cannot act in) from a helper process that joins it.
// False, with the reason in `why`, when either cannot be set: the run refuses.
bool limit_sandbox_inotify(pid_t init, const InotifyShare& share, std::string& why);

}  // namespace zpolicy::runner
