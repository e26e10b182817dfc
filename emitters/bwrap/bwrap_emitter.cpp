#include "emitters/bwrap/bwrap_emitter.hpp"

#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace zpolicy::emitters::bwrap {
namespace {

class Argv {
 public:
  explicit Argv(BindForm form) : form_(form) {}
  void add(std::initializer_list<std::string> words) { out_.args.insert(out_.args.end(), words); }
  // A bind of host `source` at `dest`: by path, or by the next descriptor.
  void bind(bool read_only, const std::string& source, const std::string& dest) {
    if (form_ == BindForm::Path) return add({read_only ? "--ro-bind" : "--bind", source, dest});
    const int fd = kFirstBindFd + static_cast<int>(out_.sources.size());
    out_.sources.push_back({fd, source});
    add({read_only ? "--ro-bind-fd" : "--bind-fd", std::to_string(fd), dest});
  }
  BwrapArgs take() { return std::move(out_); }

 private:
  BindForm form_;
  BwrapArgs out_;
};

}  // namespace

BwrapArgs emit(const ir::Resolved& r, BindForm form) {
  if (!ir::is_confined(r.mode))
    throw std::invalid_argument("bwrap emitter: danger-full-access has no sandbox");
  Argv a(form);
  // Process isolation. --unshare-user is explicit because bwrap started by root would
  // otherwise skip it, and --disable-userns needs it; together with --cap-drop ALL a
  // sandbox started by root holds no capability inside.
  a.add({"--new-session", "--die-with-parent"});
  a.add({"--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-uts",
         "--unshare-cgroup-try"});
  if (r.network != ir::Network::Full) a.add({"--unshare-net"});
  a.add({"--disable-userns", "--cap-drop", "ALL"});

  // The mount plan: later mounts cover earlier ones, so the order is read roots, the
  // sandbox's own /dev /proc /tmp, writable roots, pins, protected paths, deny masks.
  for (const auto& p : r.read) a.bind(true, p.path, p.path);
  // A readable root named through a symlink keeps its name (/lib64 -> /usr/lib64).
  for (const auto& l : r.read_links) a.add({"--symlink", l.target, l.link});
  // The whole procfs read-only: a sandbox started by root keeps kuid 0, and every
  // procfs file that checks only its owner (/proc/sys/*, sysrq-trigger, irq, ...) would
  // write the host kernel's state. Read-only at the mount closes the class, including
  // files a future kernel adds; docs/kernel-state.md gives the trade-off.
  a.add({"--dev", "/dev", "--proc", "/proc", "--remount-ro", "/proc"});
  if (r.private_tmp) a.add({"--tmpfs", "/tmp"});
  if (r.mode == ir::Mode::WorkspaceWrite) {
    // A pin is a directory bound onto itself: the kernel refuses to rename or remove a
    // mount point, so a protected path cannot be moved out from under its rule. A pin
    // above a writable root (`W/a` for `write: [W, W/a/b]`) is bound before that root:
    // bwrap's binds are recursive from the host, where `W/a/b` is no mount point, so a
    // later bind of `W/a` would cover the root's mount and leave `W/a/b` a plain,
    // renamable directory. Roots are sorted by depth, so every root and pin above a root
    // is bound before it; the other pins follow the roots, as before.
    std::unordered_map<std::string_view, size_t> pin_at;
    for (size_t i = 0; i < r.pin.size(); ++i) pin_at.emplace(r.pin[i].path, i);
    std::vector<bool> pinned(r.pin.size(), false);
    auto pin = [&](size_t i) {
      if (pinned[i]) return;
      pinned[i] = true;
      a.bind(false, r.pin[i].path, r.pin[i].path);
    };
    for (const auto& w : r.write) {
      const std::string_view root = w.path;
      for (auto at = root.find('/', 1); at != std::string_view::npos; at = root.find('/', at + 1))
        if (const auto p = pin_at.find(root.substr(0, at)); p != pin_at.end()) pin(p->second);
      a.bind(false, w.path, w.path);
    }
    for (size_t i = 0; i < r.pin.size(); ++i) pin(i);
    // Missing protected paths get a placeholder from the runner before bwrap starts, so
    // --ro-bind (never -try) is always right: a protection that could silently not
    // apply would be a dropped deny.
    for (const auto& p : r.protect) a.bind(true, p.path, p.path);
  }
  for (const auto& d : r.deny) {
    bool in_writable = false;
    for (const auto& w : r.write) in_writable |= r.mode == ir::Mode::WorkspaceWrite && ir::path_within(w.path, d.path);
    if (d.kind == ir::HostKind::Missing && !in_writable) continue;  // nothing to read, nothing can create it
    if (d.kind == ir::HostKind::File)
      a.bind(true, "/dev/null", d.path);
    else
      a.add({"--perms", "000", "--tmpfs", d.path, "--remount-ro", d.path});
  }
  a.add({"--chdir", r.cwd});
  a.add({"--seccomp", std::to_string(kSeccompFd)});
  return a.take();
}

std::vector<std::string> emit_args(const ir::Resolved& r) { return emit(r, BindForm::Path).args; }

std::string args_text(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& s : args) out += s + "\n";
  return out;
}

std::string sources_text(const std::vector<BindSource>& sources) {
  std::string out;
  for (const auto& s : sources) out += std::to_string(s.fd) + " " + s.path + "\n";
  return out;
}

}  // namespace zpolicy::emitters::bwrap
