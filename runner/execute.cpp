#include "runner/execute.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "compiler/resolve/resolve.hpp"
#include "compiler/resolve/sandbox_mounts.hpp"
#include "runner/backend.hpp"
#include "runner/supervise.hpp"
#include "zpolicy/exit_code.hpp"

#if defined(__linux__)
#include "compiler/resolve/unmasked_names.hpp"
#include "runner/bind_sources.hpp"
#include "runner/stage_protections.hpp"
#include "runner/host_mount_table.hpp"
#include "runner/host_name_watch.hpp"
#include "runner/mount_objects_seen.hpp"
#include "runner/moved_roots.hpp"
#include "runner/network_proxy.hpp"
#include "runner/notify_share.hpp"
#include "runner/placeholders.hpp"
#include "runner/setup_check.hpp"
#include "runner/standard_streams.hpp"
#elif defined(__APPLE__)
#include "runner/macos_run.hpp"
#endif

namespace zpolicy::runner {
namespace {

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(sig);
  }
}

// The status of a run whose command was not started through bwrap's status stream
// (unconfined, sandbox-exec): the child's own, or 128+N when a second signal N made us
// kill it.
int plain_status(const Outcome& o, std::ostream& err) {
  if (o.kind == Outcome::Kind::SpawnFailed) return kExitInternal;
  if (o.kind == Outcome::Kind::TimedOut) {
    err << timeout_report(o, false);
    return kExitTimeout;
  }
  if (o.killed_by_signal) {
    err << "zpolicy: interrupted (" << signal_name(o.signal)
        << " twice); the command and its process group were killed\n";
    return kExitSignalBase + o.signal;
  }
  return status_of(o);
}

int execute_unconfined(const compiler::RunPlan& plan, std::ostream& err) {
  SpawnSpec spec;
  spec.exe = plan.exe;
  spec.argv = plan.argv;
  spec.envp = plan.exe_env;
  spec.cwd = plan.cwd;
  spec.timeout = plan.timeout;
  return plain_status(supervise(spec), err);
}

#if defined(__linux__)
// An artifact bwrap reads only after the release (the seccomp program): a pipe whose
// write end only the runner holds, filled at the release. bwrap takes end of file on
// --block-fd for a release too, so a runner killed (SIGKILL) while the sandbox is checked
// would let the command start unchecked, with nothing left to kill it at its timeout (red
// team R5-K1); an empty program then makes bwrap fail instead. The pipe is sized to hold
// the whole artifact, so filling it never waits on bwrap.
struct HeldArtifact {
  int read_end = -1, write_end = -1;
  const std::string* bytes = nullptr;
};

bool held_artifact(const std::string& bytes, HeldArtifact& out) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  out = {fds[0], fds[1], &bytes};
  if (fcntl(fds[1], F_GETPIPE_SZ) < static_cast<long>(bytes.size()) &&
      fcntl(fds[1], F_SETPIPE_SZ, static_cast<int>(bytes.size())) < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  return true;
}

// An artifact bwrap reads as soon as it starts (the environment, --args): a sealed memfd
// holding the bytes, read from its start. Neither bwrap nor anyone it could hand the
// descriptor to can change them (bwrap closes it after reading, before anything runs).
int started_artifact(const std::string& bytes) {
  const int fd = memfd_create("zpolicy-environment", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  if (done != bytes.size() || lseek(fd, 0, SEEK_SET) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Fills and closes the write end: what bwrap reads is exactly the verified bytes.
bool hand_over(HeldArtifact& a) {
  const ssize_t n = write(a.write_end, a.bytes->data(), a.bytes->size());
  close(a.write_end);
  a.write_end = -1;
  return n == static_cast<ssize_t>(a.bytes->size());
}

// The first placeholder candidate whose host kind differs from the verified one, if any:
// the workspace changed between verification and the start (a path appeared, or became
// a file), so what bwrap would bind is not what was proved.
std::optional<std::string> changed_since_verified(ir::Resolved verified, ir::Resolved& now) {
  auto expected = compiler::placeholder_candidates(verified);
  auto actual = compiler::placeholder_candidates(now);
  if (expected.size() != actual.size()) return std::string("the set of protected paths");
  for (size_t i = 0; i < expected.size(); ++i)
    if (expected[i]->path != actual[i]->path || expected[i]->kind != actual[i]->kind)
      return "'" + actual[i]->path + "' (verified as " + ir::to_string(expected[i]->kind) +
             ", now " + ir::to_string(actual[i]->kind) + ")";
  return std::nullopt;
}

// The truthful status of a bwrap run (docs/run.md "Status"): the command's own when bwrap
// reported its exec; "nothing ran" only when the status stream proves it.
int bwrap_status(const Outcome& o, const std::string& command, std::ostream& err) {
  const Execution ran = execution_of(o);
  if (o.kind == Outcome::Kind::SpawnFailed) {
    err << "zpolicy: cannot start " << kBwrapPath << "; nothing ran\n";
    return kExitInternal;
  }
  const char* may = ran == Execution::Ran         ? ""
                    : ran == Execution::DidNotRun ? " before the command started; nothing ran"
                                                  : " (the command may have started)";
  if (o.kind == Outcome::Kind::TimedOut) {
    if (ran == Execution::DidNotRun)
      err << "zpolicy: timed out before the command started; the sandbox was killed; nothing "
             "ran\n";
    else
      err << timeout_report(o, true, may);
    return kExitTimeout;
  }
  if (o.orphaned_in_background) {
    err << "zpolicy: the run was left in the background of the terminal its command holds, "
           "in a process group that cannot be stopped (orphaned: what started it is gone), "
           "where its command would read what is typed to the shell; the sandbox and every "
           "process in it were killed"
        << may
        << "; to run a command in the background, give it no terminal (< /dev/null > FILE "
           "2>&1)\n";
    return kExitSignalBase + o.signal;
  }
  if (o.killed_by_signal) {
    err << "zpolicy: interrupted (" << signal_name(o.signal) << " twice)" << may
        << "; the sandbox and every process in it were killed\n";
    return kExitSignalBase + o.signal;
  }
  if (ran == Execution::Ran) return status_of(o);
  if (o.signal) {
    // The forwarded signal ended the sandbox: before the exec if bwrap says so.
    err << "zpolicy: interrupted by " << signal_name(o.signal) << may << "\n";
    return kExitSignalBase + o.signal;
  }
  if (ran == Execution::Unknown) {
    err << "zpolicy: the sandbox was killed by " << signal_name(o.code)
        << " (the command may have started)\n";
    return status_of(o);
  }
  auto diagnosis = probe();
  if (!diagnosis.usable()) {
    err << "zpolicy: the sandbox could not be set up; nothing ran: " << diagnosis.str() << "\n";
    return kExitUnavailable;
  }
  err << "zpolicy: the sandbox could not start '" << command << "'; nothing ran\n";
  return kExitNotExecutable;
}

// The first name the guard's mount namespace (bwrap's, runner/host_mount_table.hpp
// mount_table_of: `now`) gives an existing deny root or protected path of `live` that nothing
// masks (red team A11-4), as "deny root 'PATH' ... 'NAME'", or empty. `resolved_through`:
// the table the plan was resolved through (empty when unknown: every name is looked at).
// Only a name that shows that very object there counts, as in resolution; both are looked
// up in the guard's namespace (below `guard_root`, /proc/GUARD/root), since the host's may
// have lost the mount or covered it by now (A12B-1).
std::string unmasked_new_name(const ir::Resolved& live,
                              const std::vector<compiler::MountEntry>& resolved_through,
                              const std::vector<compiler::MountEntry>& now, int guard_root) {
  // Canonical names, looked up below the guard's root (the host's, in its namespace).
  auto identity = [&](const std::string& p) -> std::optional<ir::HostIdentity> {
    struct stat st;
    const std::string rel = p == "/" ? "." : p.substr(1);
    if (fstatat(guard_root, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
    return ir::HostIdentity{static_cast<std::uint64_t>(st.st_dev),
                            static_cast<std::uint64_t>(st.st_ino)};
  };
  std::string found;
  for (const auto& n : compiler::names_the_masks_lack(live, resolved_through, now)) {
    const auto id = identity(n.original);
    if (!id || identity(n.name) != id) continue;
    found = std::string(n.deny ? "deny root" : "protected path") + " '" + n.original +
            "', which a mount the host made after the policy was resolved also shows at '" +
            n.name + "', where nothing " + (n.deny ? "masks" : "protects") + " it";
    break;
  }
  return found;
}

// The first mount of the sandbox's table `in_sandbox` below a writable root or pin of
// `live` that neither the verified argv made (`destinations`, every mount of it, hidden
// ones included; `expected`, what shows) nor `judged` listed there
// (compiler::unverified_mounts), as what the refusal says, or empty. The roots are bound
// onto themselves, so the sandbox names them as the host does; a bind elsewhere would
// move what is below them out of the comparison, and is refused.
std::string unverified_sandbox_mount(const ir::Resolved& live,
                                     const std::vector<compiler::ExpectedObject>& expected,
                                     const std::vector<std::string>& destinations,
                                     const std::vector<compiler::MountEntry>& judged,
                                     const std::vector<compiler::MountEntry>& in_sandbox) {
  using Kind = compiler::ExpectedObject::Kind;
  compiler::SandboxMountRules rules;
  for (const auto* roots : {&live.write, &live.pin})
    for (const auto& r : *roots) rules.roots.push_back(r.path);
  rules.destinations = destinations;
  for (const auto& e : expected) {
    if (e.kind == Kind::Dev || e.kind == Kind::Proc) rules.bwrap_trees.push_back(e.dest);
    if (e.kind == Kind::Bind && e.source != e.dest &&
        std::find(rules.roots.begin(), rules.roots.end(), e.source) != rules.roots.end())
      return "writable root '" + e.source + "' is bound at '" + e.dest + "', not onto itself";
  }
  const auto added = compiler::unverified_mounts(rules, judged, in_sandbox);
  if (added.empty()) return {};
  const auto& m = added.front();
  return "the sandbox holds a mount at '" + m.point + "' (" + m.fs_type + " " + m.source +
         ") in a writable root that neither the verified argv made nor the host's table "
         "judged listed there (the host moved or mounted it while the run started)";
}

int execute_bwrap(const compiler::RunPlan& plan, std::ostream& err, RunReport* report,
                  HostMountTable* resolved_through) {
  // The sandbox's limits, set before its command starts (docs/run.md "inotify: the
  // sandbox's share").
  const auto notify_share = sandbox_notify_share();
  if (!notify_share) {
    err << "zpolicy: cannot read the caller's inotify and fanotify limits (/proc/sys/fs, "
           "/proc/sys/user); nothing ran\n";
    return kExitInternal;
  }
  // The table the plan was resolved through, or one of this run's own (runner/run.hpp).
  std::optional<HostMountTable> own_mounts;
  HostMountTable& mount_table = resolved_through ? *resolved_through : own_mounts.emplace();
  ir::Resolved live = *plan.verified;
  Placeholders placeholders;
  std::string why;
  if (!placeholders.prepare(live, why, mount_table.now())) {
    err << "zpolicy: " << why << "; nothing ran\n";
    return kExitInternal;
  }
  if (!placeholders.note().empty()) err << "zpolicy: note: " << placeholders.note() << "\n";
  if (auto changed = changed_since_verified(*plan.verified, live)) {
    err << "zpolicy: the workspace changed after verification: " << *changed
        << "; refusing to run what was not verified; nothing ran\n";
    return kExitInternal;
  }
  // Watched from before the bind sources are opened until the sandbox is gone.
  std::optional<HostNameWatch> names;
  names.emplace();
  auto watched = watched_names(plan.expected_setup);
  std::string appeared;
  // The deny roots the setup check must not find: every one whose way is watched, as an
  // executor of the plan checks them (docs/embedding.md "missing_deny_roots").
  std::vector<std::string> absent;
  // From before the last look at the deny roots' ways to after the guard's unshare.
  const unsigned long mounts_before_deny_ways = mount_table.marks();
  const std::vector<WatchedName> deny_ways = missing_deny_names(live, appeared, &absent);
  for (const auto& w : deny_ways) watched.push_back(w);
  // A deny root that exists by now, created since it was resolved: nothing masks it.
  auto refuse_appeared = [&] {
    err << "zpolicy: deny root '" << appeared
        << "' was created on the host after the run was verified, and nothing would mask it; "
           "refusing to run what was not verified; nothing ran\n";
    return kExitInternal;
  };
  if (!appeared.empty()) return refuse_appeared();
  if (!names->start(std::move(watched), why)) {
    err << "zpolicy: " << why << "; nothing ran\n";
    return kExitInternal;
  }
  // The way to a missing deny root changed before its watch was in place (a symlink on it
  // re-pointed or replaced) leads through names nothing watches: walked once more, now
  // that any later change trips the watch, it must be the way watched (red team A9E-1).
  for (const auto& w : missing_deny_names(live, appeared)) {
    if (std::find(deny_ways.begin(), deny_ways.end(), w) != deny_ways.end()) continue;
    err << "zpolicy: the way to deny root '" << w.protects
        << "' changed on the host while the run started; refusing to run what was not "
           "verified; nothing ran\n";
    return kExitInternal;
  }
  if (!appeared.empty()) return refuse_appeared();
  // From here on bwrap mounts these objects whatever the paths come to name. Opened once
  // the watch is in place: a name replaced before it is then the wrong object here (or
  // none), and one replaced after it trips the watch; the other way round a rename in
  // between went unseen by both.
  // Optional, so that they are closed as soon as the guard has reported (below).
  std::optional<BindSources> sources;
  if (!sources.emplace().open(plan.bind_sources, live, why)) {
    err << "zpolicy: " << why << "; refusing to run what was not verified; nothing ran\n";
    return kExitInternal;
  }
  // Nothing with a name on a host mount reaches the sandbox as 0-2 (red team R7-D1).
  StandardStreams streams;
  const bool may_connect = plan.verified && (plan.verified->network == ir::Network::Loopback ||
                                             plan.verified->network == ir::Network::Allow);
  if (!streams.prepare(why, may_connect)) {
    err << "zpolicy: " << why << "; nothing ran\n";
    if (report) report->refused_before_start = true;
    return kExitUsage;
  }
  std::vector<int> payloads;
  std::vector<HeldArtifact> held;
  auto close_all = [&] {
    for (int fd : payloads) close(fd);
    for (auto& a : held)
      if (a.write_end >= 0) close(a.write_end);
    held.clear();
  };
  SpawnSpec spec;
  spec.fds = sources->fds();
  spec.fds.insert(spec.fds.end(), streams.fds().begin(), streams.fds().end());
  spec.read_only_streams = streams.read_only();
  spec.controlling_terminal = streams.controlling_terminal();
  if (streams.may_hold_output()) spec.output_held = [&streams] { return streams.output_held(); };
  for (const auto& p : plan.fds) {
    if (p.when == compiler::Handover::AtStart) {
      const int fd = started_artifact(p.bytes);
      if (fd < 0) {
        err << "zpolicy: cannot hand over the " << p.artifact << ": " << std::strerror(errno)
            << "; nothing ran\n";
        close_all();
        return kExitInternal;
      }
      payloads.push_back(fd);
      spec.fds.push_back({fd, p.child_fd});
      continue;
    }
    HeldArtifact a;
    if (!held_artifact(p.bytes, a)) {
      err << "zpolicy: cannot hand over the verified artifacts: " << std::strerror(errno)
          << "; nothing ran\n";
      close_all();
      return kExitInternal;
    }
    payloads.push_back(a.read_end);
    held.push_back(a);
    spec.fds.push_back({a.read_end, p.child_fd});
  }
  int status[2] = {-1, -1};
  if (plan.status_fd >= 0) {
    if (pipe2(status, O_CLOEXEC | O_NONBLOCK) != 0) {
      err << "zpolicy: cannot create the status pipe: " << std::strerror(errno)
          << "; nothing ran\n";
      close_all();
      return kExitInternal;
    }
    spec.fds.push_back({status[1], plan.status_fd});
    spec.status_fd = status[0];
  }
  // bwrap waits on the block pipe, set up and with the command not started, until the
  // sandbox is found to be what was verified (docs/run.md "Checking the sandbox before
  // the command starts") and, under network Allow, the proxy listens on its loopback
  // (docs/network.md "The proxy channel").
  int block[2] = {-1, -1};
  if (pipe2(block, O_CLOEXEC) != 0) {
    err << "zpolicy: cannot create the block pipe: " << std::strerror(errno) << "; nothing ran\n";
    close_all();
    for (int fd : status)
      if (fd >= 0) close(fd);
    return kExitInternal;
  }
  payloads.push_back(block[0]);
  spec.fds.push_back({block[0], plan.block_fd});
  const SetupCheck setup(plan.expected_setup, sources->fds(), plan.block_fd, std::move(absent));

  std::unique_ptr<NetworkProxy> proxy;
  if (plan.verified->network == ir::Network::Allow)
    proxy = std::make_unique<NetworkProxy>(plan.verified->allow, PinnedNames{});
  // Why the sandbox was killed before its command could start, and the exit code; or the
  // whole report of a refused filter proof.
  std::string refused, refused_report;
  int refused_code = kExitInternal;
  spec.on_started = [&](pid_t init, pid_t guard) {
    // Before the command can open one: what it takes, no other run of the caller lacks.
    // The sandbox's user namespace exists from the init's clone on, so this is done while
    // bwrap still sets up, not after (docs/benchmarks.md); it holds for the whole run.
    std::string why, limit_failed;
    if (!limit_sandbox_notify(init, *notify_share, why)) limit_failed = why;
    // bwrap runs, so the guard's namespace is made: a mount in between is in it (A10-3).
    if (!deny_ways.empty() && mount_table.marks() != mounts_before_deny_ways) {
      refused =
          "a filesystem was mounted or unmounted on the host while the run started, "
          "which could bring deny root '" +
          deny_ways.front().protects +
          "' into the sandbox where no watch sees it; refusing to run what was not "
          "verified";
      return false;
    }
    // The guard's root, for every look below: opened once (the guard lives until the run
    // is over).
    const int guard_root = open(("/proc/" + std::to_string(guard) + "/root").c_str(),
                                O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (guard_root < 0) {
      refused = "cannot open the guard's root: " + std::string(std::strerror(errno)) +
                "; refusing to run what was not verified";
      return false;
    }
    struct GuardRoot {
      int fd;
      ~GuardRoot() { close(fd); }
    } const close_guard_root{guard_root};
    // Each existing deny root and writable root is still the object resolution saw there,
    // or a deny root's mask would go onto another while it shows under a name it was moved
    // to (A13-1, A13C-2), and a writable root would bring mounts judged under another name
    // (A13D-1): a rename before the watch was in place, a mount over a parent before the
    // guard's unshare.
    if (auto moved = first_moved(live, guard_root)) {
      refused = *moved +
                " was moved or covered on the host while the run started; refusing to run what "
                "was not verified";
      return false;
    }
    // A bind since resolution is in it too (A11-4), and so is a mount point the host moved
    // by renaming a directory above it, which marks nothing (A13-2): the table of the
    // guard's namespace (the one bwrap copied) is read on every run.
    const auto now = mount_table_of(guard);
    if (now.empty()) {
      refused = "cannot read the guard's mount table; refusing to run what was not verified";
      return false;
    }
    // When the guard's table differs from the one the plan was resolved through (or that is
    // unknown): refused when it gives an existing deny root or protected path a name
    // nothing masks, or when the bound lints judge it (a bind of the home into a writable
    // root).
    if (!resolved_through || !compiler::same_layout(mount_table.first(), now)) {
      const std::string name = unmasked_new_name(
          live, resolved_through ? mount_table.first() : std::vector<compiler::MountEntry>{}, now,
          guard_root);
      if (!name.empty()) {
        refused = name + "; refusing to run what was not verified";
        return false;
      }
      if (auto r = compiler::lints_refuse_on(plan, now)) {
        refused_report =
            "zpolicy: the host's mounts changed while the run started; the lints, judged again "
            "on the mounts the sandbox got:\n" +
            r->report;
        refused_code = r->exit_code;
        return false;
      }
    }
    // What each mount point in a writable root shows in it must be, by identity, what the
    // lints judged at resolution (A13C-1, A13D-2): the lints looked by name on the host,
    // where the host may since have unmounted it, swapped it for another under the same
    // name, device and root, or mounted something new. On every run, since a swap leaves
    // the table's layout as it was; after the lints, which give a finding they make on the
    // new mounts by its lint (exit 3). Without a record (a plan run through run(plan)),
    // the lints judged again above are all there is.
    if (plan.mounts_judged) {
      if (auto changed = compiler::first_mount_changed(
              *plan.mounts_judged, mount_objects_seen(guard_root, live.write, now))) {
        refused = "the mount at " + *changed +
                  " in a writable root changed on the host while the run started; refusing to "
                  "run what was not verified";
        return false;
      }
    }
    switch (setup.check(init, why)) {
      case SetupCheck::Result::SetupEnded:
        return true;  // bwrap failed on its own (its init gone, too); its status stream tells
      case SetupCheck::Result::Differs:
        refused = "the sandbox is not what was verified: " + why +
                  "; refusing to run what was not verified";
        return false;
      case SetupCheck::Result::TimedOut:
        // Slow, not different: bwrap's setup grows with the square of the mount count,
        // and a workspace under the mount bound can still outrun the limit (red team
        // A18-4), which the message used to call a sandbox that was not verified.
        refused = why + " (" + std::to_string(plan.mount_destinations.size()) +
                  " mounts; bwrap's setup grows with the square of their count, and the "
                  "machine may be loaded: give the run a smaller workspace, or protect a "
                  "directory that holds many of them)";
        return false;
      case SetupCheck::Result::Holds:
        break;
    }
    // bwrap bound each writable root after the looks above, with whatever mounts lay below
    // it then (red team A14-1): the sandbox's own table, read while nothing can mount there
    // any more, is the last word. Judged against the table the lints judged: resolution's,
    // or the guard's when the plan was not resolved through this run's.
    const auto in_sandbox = setup.mounts(init);
    if (!in_sandbox || in_sandbox->empty()) {
      refused = "cannot read the sandbox's mount table; refusing to run what was not verified";
      return false;
    }
    if (auto m = unverified_sandbox_mount(live, plan.expected_setup, plan.mount_destinations,
                                          resolved_through ? mount_table.first() : now,
                                          *in_sandbox);
        !m.empty()) {
      refused = m + "; refusing to run what was not verified";
      return false;
    }
    if (!limit_failed.empty()) {
      refused = limit_failed;
      return false;
    }
    if (auto r = compiler::await_filter_proof(plan)) {
      refused_report = r->report;
      refused_code = r->exit_code;
      return false;
    }
    // Served only in a sandbox found to be what was verified.
    if (proxy) {
      std::string failure;
      int l = listen_in_sandbox(init, plan.proxy_port, failure);
      if (l >= 0) {
        proxy->serve_proxy(l);
        for (const auto& d : plan.verified->allow) {
          if (d.value.kind != ir::DestinationKind::Localhost) continue;
          l = listen_in_sandbox(init, d.value.port, failure);
          if (l < 0) break;
          proxy->serve_forward(l, d.value.port);
        }
      }
      if (l < 0) {
        refused = "refusing to run: network-proxy-unavailable: " + failure;
        refused_code = kExitUnavailable;
        return false;
      }
    }
    return true;
  };
  spec.release = [&] {
    if (!placeholders.records_durable()) {
      refused = "cannot write the run record of the placeholders to disk";
      return false;
    }
    for (auto& a : held)
      if (!hand_over(a)) return false;
    return write(block[1], "1", 1) == 1;
  };
  std::string replaced;
  spec.tripwire_fd = names->fd();
  spec.tripped = [&] {
    auto r = names->replaced();
    if (r) replaced = *r;
    return r.has_value();
  };
  // The guard drops the last references to what the cleanup removes and to what this run
  // alone watched, after the run: the bind descriptors, the placeholders (each held since it
  // was made), the watch, the record (SpawnSpec::linger). So ours are all closed before it
  // is let go.
  for (const auto& [mine, theirs] : sources->fds()) spec.linger.push_back(mine);
  for (const int held : placeholders.held()) spec.linger.push_back(held);
  if (names->fd() >= 0) spec.linger.push_back(names->fd());
  if (placeholders.record_fd() >= 0) spec.linger.push_back(placeholders.record_fd());
  spec.reported = [&] {
    placeholders.cleanup();
    sources.reset();
    names.reset();
  };
  spec.exe = plan.exe;
  spec.argv = plan.argv;
  spec.envp = plan.exe_env;  // none: the command's reaches it through --args
  spec.cwd = plan.cwd;
  spec.timeout = plan.timeout;
  spec.guarded = true;
  std::vector<WritableBind> writable;
  for (const auto& s : plan.bind_sources) {
    spec.staged.push_back({s.fd, s.path, s.writable});
    if (s.writable) writable.push_back({s.fd, s.path});
  }
  spec.protections = stage_protections(writable, live);
  Outcome outcome = supervise(spec);
  if (report) {
    report->may_have_run = !outcome.start_refused && execution_of(outcome) != Execution::DidNotRun;
    report->interrupted_by = outcome.signal;
  }
  streams.finish();
  close_all();
  if (block[1] >= 0) close(block[1]);
  if (outcome.start_refused) {
    if (report) report->refused_before_start = true;
    placeholders.cleanup();
    for (int fd : status)
      if (fd >= 0) close(fd);
    if (!refused_report.empty()) {
      err << refused_report;
      return refused_code;
    }
    if (refused.empty())
      refused = "cannot release the sandbox: " + std::string(std::strerror(errno));
    err << "zpolicy: " << refused << "; nothing ran\n";
    return refused_code;
  }
  if (proxy) {
    const auto refusals = proxy->refusals();
    for (const auto& r : refusals)
      err << "zpolicy: network: refused " << r.host << ":" << r.port << " (" << r.reason
          << "): " << r.detail << "\n";
    const size_t omitted = proxy->refusals_omitted();
    if (omitted)
      err << "zpolicy: network: refused " << omitted
          << " more connection(s) to other destinations, not listed one by one\n";
    if (report) {
      report->network_refusals = refusals;
      report->network_refusals_omitted = omitted;
    }
  }
  for (int fd : status)
    if (fd >= 0) close(fd);
  placeholders.cleanup();
  if (outcome.tripped) {
    const Execution ran = execution_of(outcome);
    err << "zpolicy: " << replaced << "; the sandbox was stopped"
        << (ran == Execution::DidNotRun ? "; nothing ran"
            : ran == Execution::Unknown ? " (the command may have started)"
                                        : "")
        << "\n";
    return kExitInternal;
  }
  if (report && execution_of(outcome) == Execution::DidNotRun) report->did_not_start = true;
  return bwrap_status(outcome, plan.command.at(0), err);
}
#endif

}  // namespace

int execute(const compiler::RunPlan& plan, std::ostream& err, RunReport* report,
            [[maybe_unused]] HostMountTable* mounts) {
  // Placeholders and records are made before supervise() takes the signals (red team
  // A28B-1); a caller's own hold (runner::run) lasts longer.
  const HeldSignals held;
  for (const auto& l : plan.accepted)
    err << "zpolicy: accepted for this run: " << l.report() << "\n";
  // Whatever the backend: an unconfined command keeps the effective identity.
  if (auto why = set_id_process(); !why.empty()) {
    err << "zpolicy: refusing to run: " << why << "; nothing ran\n";
    return kExitInternal;
  }
  switch (plan.backend) {
    case compiler::Backend::Unconfined:
      if (report) report->may_have_run = true;
      return execute_unconfined(plan, err);
    case compiler::Backend::Bwrap:
#if defined(__linux__)
      if (plan.verified) return execute_bwrap(plan, err, report, mounts);
#endif
      break;
    case compiler::Backend::SandboxExec:
#if defined(__APPLE__)
      if (plan.verified && plan.verified->network == ir::Network::Allow) {
        err << "zpolicy: refusing to run: network-proxy-unavailable: the allow-list proxy is "
               "not served on macOS yet (issue 15); nothing ran\n";
        return kExitUnavailable;
      }
      // sandbox-exec has no status stream: from here on, the command may have run.
      if (report) report->may_have_run = true;
      return run_sandbox_exec(plan.exe,
                              SandboxExecRun{plan.sbpl_profile, plan.sbpl_params, plan.command,
                                             plan.env, plan.cwd, plan.timeout},
                              err);
#endif
      break;
  }
  err << "zpolicy: refusing to run: no " << compiler::to_string(plan.backend)
      << " backend on this system; nothing ran\n";
  return kExitUnavailable;
}

}  // namespace zpolicy::runner
