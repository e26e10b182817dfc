#pragma once

#include <sys/types.h>

#include <array>
#include <iterator>
#include <optional>
#include <string>

namespace zpolicy::runner {

// A sandbox's inotify instances and watches, and its fanotify groups and marks, are charged
// to its caller: each user namespace's counts are checked against its own limits and then,
// as the namespace's owner, against those of every ancestor (kernel/ucount.c). A command
// that opened instances until refused took all of the caller's
// `fs.inotify.max_user_instances`, and every other run of that user, which needs one to
// watch its protected names on the host, refused (red team R8-L2); fanotify groups the
// same way for the caller's other fanotify users (R9c-L3). The sandbox's own user
// namespace has limits of its own (`user.max_inotify_*`, `user.max_fanotify_*`), which
// bwrap leaves at the maximum: before the command starts they are lowered to a share of
// the caller's, so that the caller keeps the rest (docs/run.md "inotify: the sandbox's
// share").

// The share of each of the caller's limits one sandbox gets: a quarter.
inline constexpr long kNotifyShareDivisor = 4;

// One limit: the initial user namespace's sysctl, and the per-namespace one (the caller's
// own when read, the sandbox's when written).
struct NotifyLimit {
  const char* initial;
  const char* in_namespace;
};
inline constexpr NotifyLimit kNotifyLimits[] = {
    {"/proc/sys/fs/inotify/max_user_instances", "/proc/sys/user/max_inotify_instances"},
    {"/proc/sys/fs/inotify/max_user_watches", "/proc/sys/user/max_inotify_watches"},
    {"/proc/sys/fs/fanotify/max_user_groups", "/proc/sys/user/max_fanotify_groups"},
    {"/proc/sys/fs/fanotify/max_user_marks", "/proc/sys/user/max_fanotify_marks"},
};
inline constexpr size_t kNotifyLimitCount = std::size(kNotifyLimits);

// The limits a sandbox gets, one per entry of kNotifyLimits: a quarter of the caller's.
struct NotifyShare {
  std::array<long, kNotifyLimitCount> limits{};
};

// The share of this caller's limits; nullopt when they cannot be read (the run refuses).
std::optional<NotifyShare> sandbox_notify_share();

// Sets `share` in the user namespace that owns `init`'s pid namespace (the sandbox's
// outermost one, which the command cannot act in) from a helper process that joins it.
// False, with the reason in `why`, when one cannot be set: the run refuses.
bool limit_sandbox_notify(pid_t init, const NotifyShare& share, std::string& why);

}  // namespace zpolicy::runner
