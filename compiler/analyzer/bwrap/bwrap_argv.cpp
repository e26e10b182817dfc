#include "compiler/analyzer/bwrap/bwrap_argv.hpp"

#include <algorithm>
#include <charconv>
#include <span>

namespace zpolicy::compiler {

namespace {

struct BindSpelling {
  std::string_view option;
  BwrapOpKind kind;
  bool try_source;
};

constexpr BindSpelling kBinds[] = {
    {"--bind", BwrapOpKind::Bind, false},        {"--bind-try", BwrapOpKind::Bind, true},
    {"--ro-bind", BwrapOpKind::RoBind, false},   {"--ro-bind-try", BwrapOpKind::RoBind, true},
    {"--dev-bind", BwrapOpKind::DevBind, false}, {"--dev-bind-try", BwrapOpKind::DevBind, true},
};

struct DestSpelling {
  std::string_view option;
  BwrapOpKind kind;
};

constexpr DestSpelling kDestOps[] = {
    {"--remount-ro", BwrapOpKind::RemountRo},
    {"--tmpfs", BwrapOpKind::Tmpfs},
    {"--dev", BwrapOpKind::Dev},
    {"--proc", BwrapOpKind::Proc},
    {"--dir", BwrapOpKind::Dir},
};

std::optional<unsigned> parse_octal(std::string_view s) {
  unsigned v = 0;
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 8);
  if (ec != std::errc() || end != s.data() + s.size() || v > 07777) return std::nullopt;
  return v;
}

std::optional<long> parse_decimal(std::string_view s) {
  long v = 0;
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

class Parser {
 public:
  Parser(std::string_view text, std::shared_ptr<PathTable> paths) : text_(text) {
    out_.paths = std::move(paths);
    size_t pos = 0;
    while (pos < text.size()) {
      starts_.push_back(pos);
      const size_t nl = text.find('\n', pos);
      pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    }
    starts_.push_back(pos);
  }

  BwrapParseResult run() {
    BwrapParseResult result;
    // Two searches of the whole text, the library's fast ones, rather than a scan of
    // every argument: the first such character is in the first argument that has one.
    const size_t control = std::min(text_.find('\r'), text_.find('\0'));
    if (control != std::string_view::npos)
      fail(static_cast<int>(std::count(text_.begin(), text_.begin() + control, '\n')) + 1,
           "argument contains a control character");
    out_.ops.reserve(size() / 2);
    while (i_ < size() && !error_) step();
    if (!error_ && pending_perms_)
      fail(perms_line_, "--perms must be followed by --tmpfs or --dir");
    if (!error_ && pending_size_) fail(perms_line_, "--size must be followed by --tmpfs");
    if (!error_ && out_.flags.disable_userns && !out_.flags.unshare_user)
      fail(disable_userns_line_, "--disable-userns requires --unshare-user");
    if (error_) {
      result.error = error_;
    } else {
      result.argv = std::move(out_);
    }
    return result;
  }

 private:
  void fail(int line, std::string message) {
    if (!error_) error_ = BwrapParseError{line, std::move(message)};
  }

  int line() const { return static_cast<int>(i_) + 1; }

  // The next argument of the current option; an option name or the end of the file
  // where an argument belongs means the artifact was cut or shifted.
  std::optional<std::string_view> arg(std::string_view option, size_t n) {
    size_t at = i_ + n;
    if (at >= size()) {
      fail(line(), std::string(option) + ": missing argument");
      return std::nullopt;
    }
    return arg_at(at);
  }

  void not_a_path(std::string_view option, size_t n, std::string_view a) {
    fail(line() + static_cast<int>(n),
         std::string(option) + ": '" + std::string(a) + "' is not an absolute path or ${VAR} path");
  }

  std::optional<PathTable::Id> path_arg(std::string_view option, size_t n) {
    auto a = arg(option, n);
    if (!a) return std::nullopt;
    auto id = out_.paths->parse(*a);
    if (!id) not_a_path(option, n, *a);
    return id;
  }

  // The arguments are one stretch of the text: a copy of it with the newlines between
  // them made spaces.
  std::string_view text_of(size_t count) {
    const size_t n = std::min(count, size() - i_);
    if (n == 0) return {};
    const size_t first = starts_[i_];
    std::string copy(text_.substr(first, starts_[i_ + n] - 1 - first));
    for (size_t k = i_ + 1; k < i_ + n; ++k) copy[starts_[k] - 1 - first] = ' ';
    return out_.texts->emplace_back(std::move(copy));
  }

  void push(BwrapOp op, size_t count) {
    op.line = line();
    op.text = text_of(count);
    out_.ops.push_back(std::move(op));
    i_ += count;
  }

  // --perms and --size only modify the very next option, and bwrap refuses any other
  // option in between.
  void check_modifiers(std::string_view option) {
    bool perms_ok =
        option == "--tmpfs" || option == "--dir" || option == "--size" || option == "--perms";
    bool size_ok = option == "--tmpfs" || option == "--perms" || option == "--size";
    if (pending_perms_ && !perms_ok)
      fail(perms_line_, "--perms must be followed by --tmpfs or --dir, not " + std::string(option));
    if (pending_size_ && !size_ok)
      fail(perms_line_, "--size must be followed by --tmpfs, not " + std::string(option));
  }

  void step() {
    std::string_view a = arg_at(i_);
    if (a == "--") return fail(line(), "'--' ends bwrap's options; bwrap.args must stop before it");
    check_modifiers(a);
    if (error_) return;
    BwrapFlags& f = out_.flags;
    auto flag = [&](bool& b, bool value) {
      b = value;
      ++i_;
    };
    if (a == "--unshare-user") return flag(f.unshare_user, true);
    if (a == "--unshare-user-try") return flag(f.unshare_user_try, true);
    if (a == "--unshare-ipc") return flag(f.unshare_ipc, true);
    if (a == "--unshare-pid") return flag(f.unshare_pid, true);
    if (a == "--unshare-net") return flag(f.unshare_net, true);
    if (a == "--share-net") return flag(f.unshare_net, false);
    if (a == "--unshare-uts") return flag(f.unshare_uts, true);
    if (a == "--unshare-cgroup") return flag(f.unshare_cgroup, true);
    if (a == "--unshare-cgroup-try") return flag(f.unshare_cgroup_try, true);
    if (a == "--new-session") return flag(f.new_session, true);
    if (a == "--die-with-parent") return flag(f.die_with_parent, true);
    if (a == "--unshare-all") {
      // bwrap's definition: the -try variants of user and cgroup.
      f.unshare_user_try = f.unshare_ipc = f.unshare_pid = f.unshare_uts = true;
      f.unshare_cgroup_try = f.unshare_net = true;
      ++i_;
      return;
    }
    if (a == "--disable-userns") {
      disable_userns_line_ = line();
      return flag(f.disable_userns, true);
    }
    if (a == "--cap-drop") {
      auto cap = arg(a, 1);
      if (!cap) return;
      if (*cap == "ALL")
        f.cap_drop_all = true;
      else if (!cap->starts_with("CAP_"))
        return fail(line() + 1, "--cap-drop: unknown capability '" + std::string(*cap) + "'");
      i_ += 2;
      return;
    }
    if (a == "--seccomp") {
      auto fd = arg(a, 1);
      if (!fd) return;
      auto v = parse_decimal(*fd);
      if (!v || *v > 1'000'000)
        return fail(line() + 1, "--seccomp: '" + std::string(*fd) + "' is not a file descriptor");
      f.seccomp_fd = static_cast<int>(*v);
      i_ += 2;
      return;
    }
    if (a == "--chdir") {
      auto dir = arg(a, 1);
      if (!dir) return;
      auto p = SymbolicPath::parse(*dir);
      if (!p) return not_a_path(a, 1, *dir);
      f.chdir = std::move(p);
      i_ += 2;
      return;
    }
    if (a == "--perms") {
      if (pending_perms_) return fail(line(), "--perms given twice for the same option");
      auto v = arg(a, 1);
      if (!v) return;
      auto perms = parse_octal(*v);
      if (!perms) return fail(line() + 1, "--perms takes an octal mode <= 07777");
      pending_perms_ = perms;
      perms_line_ = line();
      i_ += 2;
      return;
    }
    if (a == "--size") {
      if (pending_size_) return fail(line(), "--size given twice for the same option");
      auto v = arg(a, 1);
      if (!v) return;
      auto size = parse_decimal(*v);
      if (!size || *size == 0) return fail(line() + 1, "--size takes a non-zero number of bytes");
      pending_size_ = true;
      perms_line_ = line();
      i_ += 2;
      return;
    }
    for (const auto& b : kBinds) {
      if (a != b.option) continue;
      auto src = path_arg(a, 1);
      // Most binds put a path onto itself, and the same text is the same path.
      const bool onto_itself = i_ + 2 < size() && arg_at(i_ + 2) == arg_at(i_ + 1);
      auto dest = !src ? std::nullopt : onto_itself ? src : path_arg(a, 2);
      if (!dest) return;
      BwrapOp op;
      op.kind = b.kind;
      op.try_source = b.try_source;
      op.source = src;
      op.dest = *dest;
      return push(std::move(op), 3);
    }
    for (const auto& d : kDestOps) {
      if (a != d.option) continue;
      auto dest = path_arg(a, 1);
      if (!dest) return;
      BwrapOp op;
      op.kind = d.kind;
      op.dest = *dest;
      if (d.kind == BwrapOpKind::Tmpfs || d.kind == BwrapOpKind::Dir) {
        op.perms = pending_perms_;
        pending_perms_.reset();
        pending_size_ = false;
      }
      return push(std::move(op), 2);
    }
    if (a == "--symlink") {
      auto target = arg(a, 1);
      if (!target) return;
      if (target->empty()) return fail(line() + 1, "--symlink: empty target");
      auto dest = path_arg(a, 2);
      if (!dest) return;
      BwrapOp op;
      op.kind = BwrapOpKind::Symlink;
      op.dest = *dest;
      push(std::move(op), 3);
      // A view of the target in the op's text, which the argv keeps, rather than a copy:
      // the text is the option, then each argument after one separator.
      BwrapOp& pushed = out_.ops.back();
      pushed.link_target = pushed.text.substr(a.size() + 1, target->size());
      return;
    }
    if (a == "--chmod") {
      auto v = arg(a, 1);
      if (!v) return;
      auto perms = parse_octal(*v);
      if (!perms) return fail(line() + 1, "--chmod takes an octal mode <= 07777");
      auto dest = path_arg(a, 2);
      if (!dest) return;
      BwrapOp op;
      op.kind = BwrapOpKind::Chmod;
      op.perms = perms;
      op.dest = *dest;
      return push(std::move(op), 3);
    }
    if (a.starts_with("--"))
      return fail(line(), "option '" + std::string(a) + "' is outside the subset zpolicy verifies");
    fail(line(), "'" + std::string(a) + "' is not an option (an argument out of place?)");
  }

  size_t size() const { return starts_.size() - 1; }

  std::string_view arg_at(size_t k) const {
    return text_.substr(starts_[k], starts_[k + 1] - 1 - starts_[k]);
  }

  std::string_view text_;
  // Where each argument (a line) starts in the text, then where one more would start
  // (past the last one's newline, or where it would be): half the room of a view per
  // argument, and a view costs a subtraction.
  std::vector<size_t> starts_;
  size_t i_ = 0;
  BwrapArgv out_;
  std::optional<BwrapParseError> error_;
  std::optional<unsigned> pending_perms_;
  bool pending_size_ = false;
  int perms_line_ = 0;
  int disable_userns_line_ = 0;
};

}  // namespace

BwrapParseResult parse_bwrap_args(std::string_view text, std::shared_ptr<PathTable> paths) {
  return Parser(text, std::move(paths)).run();
}

}  // namespace zpolicy::compiler
