#include "api/plan.hpp"

#include <unistd.h>

#include <climits>
#include <memory>
#include <variant>

#include "compiler/resolve/resolve.hpp"
#include "ir/path.hpp"
#include "runner/host_name_watch.hpp"
#include "runner/notify_share.hpp"
#include "runner/macos_argv.hpp"
#include "runner/supervise.hpp"

namespace zpolicy::api {
namespace {

std::string current_directory() {
  char buf[PATH_MAX];
  return getcwd(buf, sizeof buf) ? std::string(buf) : std::string();
}

// The directories bwrap needs to exist, each with the writable root it is created from
// (runner/placeholders.cpp walks them the same way). A protected path that is a file (an
// existing `.env`) is bound as it is: it is no placeholder, and an executor would refuse
// it as "not a directory".
std::vector<Placeholder> placeholders_of(const ir::Resolved& verified) {
  ir::Resolved r = verified;
  std::vector<Placeholder> out;
  for (const auto* p : compiler::placeholder_candidates(r)) {
    if (p->kind != ir::HostKind::Directory) continue;
    const ir::ResolvedPath* root = nullptr;
    for (const auto& w : r.write)
      if (ir::path_within(w.path, p->path)) root = &w;
    if (root) out.push_back({p->path, root->path});
  }
  return out;
}

}  // namespace

std::optional<Plan> public_plan(const compiler::RunPlan& p, std::string& error) {
  Plan out;
  out.backend = compiler::to_string(p.backend);
  out.exe = p.exe;
  out.argv = p.argv;
  if (p.backend == compiler::Backend::SandboxExec) {
    // The runner builds this argv when it executes; the plan carries it built.
    auto argv = runner::sandbox_exec_argv(p.sbpl_profile, p.sbpl_params, p.command);
    if (const auto* e = std::get_if<runner::SandboxExecArgvError>(&argv)) {
      error = "cannot build the sandbox-exec command line: " + e->message;
      return std::nullopt;
    }
    out.argv = std::get<std::vector<std::string>>(std::move(argv));
  }
  out.env = p.env;
  out.exe_env = p.exe_env;
  // The runner starts the backend where it was started itself.
  out.cwd = p.cwd.empty() ? current_directory() : p.cwd;
  for (const auto& f : p.fds)
    out.fds.push_back({f.child_fd, f.artifact, f.bytes,
                       f.when == compiler::Handover::AtStart ? "start" : "release"});
  if (p.status_fd >= 0) out.status_fd = p.status_fd;
  if (p.block_fd >= 0) out.block_fd = p.block_fd;
  for (const auto& e : p.expected_setup)
    out.setup_checks.push_back(
        {e.dest, compiler::to_string(e.kind), e.source_fd, e.read_only, e.link_target});
  if (p.backend == compiler::Backend::Bwrap && p.verified) {
    out.placeholders = placeholders_of(*p.verified);
    for (const auto& b : p.bind_sources) {
      PlanBind bind{b.fd, b.path, std::nullopt, std::nullopt};
      if (const auto identity = compiler::recorded_identity(*p.verified, b.path)) {
        bind.dev = identity->dev;
        bind.ino = identity->ino;
      }
      out.binds.push_back(std::move(bind));
    }
    // The names `run` watches, listed as it computes them when it starts (runner/execute).
    std::string appeared;
    auto created = runner::missing_deny_names(*p.verified, appeared);
    if (!appeared.empty()) {
      error = "deny root '" + appeared +
              "' was created on the host after the run was verified, and nothing would mask it";
      return std::nullopt;
    }
    for (const auto& w : runner::watched_names(p.expected_setup))
      out.watches.push_back({w.directory, w.name, w.protects, "replaced"});
    for (const auto& w : created)
      out.watches.push_back({w.directory, w.name, w.protects, w.created ? "created" : "replaced"});
    out.missing_deny_roots = runner::missing_deny_roots(*p.verified);
    const auto share = runner::sandbox_notify_share();
    if (!share) {
      error = "cannot read the caller's inotify and fanotify limits (/proc/sys/fs, /proc/sys/user)";
      return std::nullopt;
    }
    out.notify_share = PlanNotifyShare{share->limits[0], share->limits[1], share->limits[2],
                                       share->limits[3]};
    out.private_mounts = true;  // as the guard does (runner/private_mounts.hpp)
  }
  if (p.timeout) {
    out.timeout_ms = p.timeout->count();
    out.timeout_grace_ms = runner::kTimeoutGrace.count();
  }
  out.sbpl_profile = p.sbpl_profile;
  out.sbpl_params = p.sbpl_params;
  for (const auto& l : p.accepted) out.accepted.push_back(l.report());
  if (p.backend == compiler::Backend::Bwrap && p.verified &&
      p.verified->network == ir::Network::Allow) {
    PlanNetworkProxy proxy;
    proxy.port = p.proxy_port;
    for (const auto& d : p.verified->allow) {
      proxy.allow.push_back(d.value.str());
      if (d.value.kind == ir::DestinationKind::Localhost) proxy.forwards.push_back(d.value.port);
    }
    out.network_proxy = std::move(proxy);
  }
  return out;
}

std::optional<Plan> runnable_plan(compiler::RunPlan p, std::string& error) {
  auto out = public_plan(p, error);
  if (!out) return out;
  p.cwd = out->cwd;
  out->verified = std::make_shared<const detail::VerifiedRun>(
      detail::VerifiedRun{std::move(p), *out});
  return out;
}

}  // namespace zpolicy::api
