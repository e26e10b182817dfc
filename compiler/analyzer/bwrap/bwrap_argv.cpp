#include "compiler/analyzer/bwrap/bwrap_argv.hpp"

#include <algorithm>
#include <charconv>
#include <map>
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

// The lines of a text; a final newline ends the last line rather than starting another.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t pos = 0; pos < text.size();) {
    const size_t nl = std::min(text.find('\n', pos), text.size());
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

// One line of bwrap.fds.
struct FdEntry {
  PathTable::Id path;
  int line;
  bool used = false;
};

class Parser {
 public:
  Parser(std::string_view text, std::shared_ptr<PathTable> paths)
      : text_(text), args_(lines_of(text)) {
    out_.paths = std::move(paths);
  }

  // Reads the bwrap.fds table; false (with the error set) when it is malformed.
  bool read_fds(std::string_view table) {
    by_descriptor_ = true;
    int line = 0;
    for (const std::string_view entry : lines_of(table)) {
      ++line;
      auto table_error = [&](std::string message) {
        error_ = ir::error_at({"bwrap.fds", line, 1}, std::move(message));
        return false;
      };
      const size_t space = entry.find(' ');
      if (space == std::string_view::npos) return table_error("expected 'FD PATH'");
      auto fd = parse_decimal(entry.substr(0, space));
      if (!fd || *fd > 1'000'000) return table_error("'" + std::string(entry.substr(0, space)) + "' is not a file descriptor");
      if (*fd <= 2) return table_error("descriptor " + std::to_string(*fd) + " is standard input, output or error");
      if (entry.find_first_of(std::string_view("\r\0", 2)) != std::string_view::npos)
        return table_error("path contains a control character");
      auto id = out_.paths->parse(entry.substr(space + 1));
      if (!id) return table_error("'" + std::string(entry.substr(space + 1)) + "' is not an absolute path");
      if (!fds_.emplace(static_cast<int>(*fd), FdEntry{*id, line}).second)
        return table_error("descriptor " + std::to_string(*fd) + " is listed twice");
    }
    return true;
  }

  ir::Result<BwrapArgv> run() {
    if (error_) return *error_;
    // Two searches of the whole text rather than two of every argument: the first such
    // character is in the first argument that has one.
    const size_t control = std::min(text_.find('\r'), text_.find('\0'));
    if (control != std::string_view::npos)
      fail(static_cast<int>(std::count(text_.begin(), text_.begin() + control, '\n')) + 1,
           "argument contains a control character");
    while (i_ < size() && !error_) step();
    if (!error_ && pending_perms_)
      fail(perms_line_, "--perms must be followed by --tmpfs or --dir");
    if (!error_ && pending_size_) fail(perms_line_, "--size must be followed by --tmpfs");
    if (!error_ && out_.flags.disable_userns && !out_.flags.unshare_user)
      fail(disable_userns_line_, "--disable-userns requires --unshare-user");
    if (!error_ && out_.flags.seccomp_fd && fds_.count(*out_.flags.seccomp_fd))
      fail(fds_.at(*out_.flags.seccomp_fd).line,
           "descriptor " + std::to_string(*out_.flags.seccomp_fd) +
               " is both a bind source and the --seccomp program", "bwrap.fds");
    for (const auto& [fd, e] : fds_)
      if (!error_ && !e.used)
        fail(e.line, "descriptor " + std::to_string(fd) + " is bound by no --bind-fd or --ro-bind-fd",
             "bwrap.fds");
    if (error_) return *error_;
    return std::move(out_);
  }

 private:
  void fail(int line, std::string message, std::string artifact = "bwrap.args") {
    if (!error_) error_ = ir::error_at({std::move(artifact), line, 1}, std::move(message));
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

  // The option and its arguments, consecutive lines of the text, joined by spaces.
  std::string_view text_of(size_t count) {
    const char* first = args_[i_].data();
    const std::string_view last = args_[i_ + count - 1];
    std::string joined(first, last.data() + last.size());
    for (size_t k = i_ + 1; k < i_ + count; ++k) joined[args_[k].data() - 1 - first] = ' ';
    return out_.texts->emplace_back(std::move(joined));
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
      if (!src) return;
      auto dest = path_arg(a, 2);
      if (!dest) return;
      BwrapOp op;
      op.kind = b.kind;
      op.try_source = b.try_source;
      op.source = src;
      op.dest = *dest;
      return push(std::move(op), 3);
    }
    if (a == "--bind-fd" || a == "--ro-bind-fd") {
      auto fd_text = arg(a, 1);
      if (!fd_text) return;
      auto fd = parse_decimal(*fd_text);
      if (!fd || *fd > 1'000'000)
        return fail(line() + 1, std::string(a) + ": '" + std::string(*fd_text) + "' is not a file descriptor");
      auto entry = fds_.find(static_cast<int>(*fd));
      if (!by_descriptor_)
        return fail(line(), std::string(a) + ": no bwrap.fds says what descriptor " +
                                std::to_string(*fd) + " holds");
      if (entry == fds_.end())
        return fail(line() + 1, std::string(a) + ": descriptor " + std::to_string(*fd) +
                                    " is not in bwrap.fds");
      if (entry->second.used)
        return fail(line() + 1, std::string(a) + ": descriptor " + std::to_string(*fd) +
                                    " is bound twice; bwrap closes it after the first mount");
      entry->second.used = true;
      auto dest = path_arg(a, 2);
      if (!dest) return;
      BwrapOp op;
      op.kind = a == "--bind-fd" ? BwrapOpKind::Bind : BwrapOpKind::RoBind;
      op.source = entry->second.path;
      op.source_fd = static_cast<int>(*fd);
      op.dest = *dest;
      push(std::move(op), 3);
      // Traces name the host path the descriptor holds, not only its number.
      BwrapOp& pushed = out_.ops.back();
      pushed.text = out_.texts->emplace_back(std::string(pushed.text) + " (" +
                                             out_.paths->path(*pushed.source).str() + ")");
      return;
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
      op.link_target = out_.texts->emplace_back(*target);
      return push(std::move(op), 3);
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

  size_t size() const { return args_.size(); }
  std::string_view arg_at(size_t k) const { return args_[k]; }

  std::string_view text_;
  std::vector<std::string_view> args_;  // one a line, in text_
  size_t i_ = 0;
  BwrapArgv out_;
  std::optional<ir::Diagnostic> error_;
  std::optional<unsigned> pending_perms_;
  bool pending_size_ = false;
  int perms_line_ = 0;
  int disable_userns_line_ = 0;
  bool by_descriptor_ = false;  // a bwrap.fds table was given
  std::map<int, FdEntry> fds_;
};

}  // namespace

ir::Result<BwrapArgv> parse_bwrap_args(std::string_view text, std::shared_ptr<PathTable> paths,
                                       std::optional<std::string_view> fds) {
  Parser parser(text, std::move(paths));
  if (fds) parser.read_fds(*fds);
  return parser.run();
}

}  // namespace zpolicy::compiler
