#include "compiler/analyzer/bwrap/bwrap_argv.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <utility>

#include "ir/target.hpp"

namespace zpolicy::compiler {

namespace {

// What follows a setup option on its lines.
enum class Args {
  SourceDest,  // --bind SRC DEST
  FdDest,      // --bind-fd FD DEST
  Dest,        // --tmpfs DEST
  TargetDest,  // --symlink TARGET DEST
  ModeDest,    // --chmod MODE DEST
};

struct OpSpelling {
  std::string_view option;
  BwrapOpKind kind;
  bool try_source;
  Args args;
};

constexpr OpSpelling kOps[] = {
    {"--bind", BwrapOpKind::Bind, false, Args::SourceDest},
    {"--bind-try", BwrapOpKind::Bind, true, Args::SourceDest},
    {"--ro-bind", BwrapOpKind::RoBind, false, Args::SourceDest},
    {"--ro-bind-try", BwrapOpKind::RoBind, true, Args::SourceDest},
    {"--dev-bind", BwrapOpKind::DevBind, false, Args::SourceDest},
    {"--dev-bind-try", BwrapOpKind::DevBind, true, Args::SourceDest},
    {"--bind-fd", BwrapOpKind::Bind, false, Args::FdDest},
    {"--ro-bind-fd", BwrapOpKind::RoBind, false, Args::FdDest},
    {"--remount-ro", BwrapOpKind::RemountRo, false, Args::Dest},
    {"--tmpfs", BwrapOpKind::Tmpfs, false, Args::Dest},
    {"--dev", BwrapOpKind::Dev, false, Args::Dest},
    {"--proc", BwrapOpKind::Proc, false, Args::Dest},
    {"--dir", BwrapOpKind::Dir, false, Args::Dest},
    {"--symlink", BwrapOpKind::Symlink, false, Args::TargetDest},
    {"--chmod", BwrapOpKind::Chmod, false, Args::ModeDest},
};

// Options without an argument that set a flag.
struct FlagSpelling {
  std::string_view option;
  bool BwrapFlags::*flag;
  bool value;
};

constexpr FlagSpelling kFlags[] = {
    {"--unshare-user", &BwrapFlags::unshare_user, true},
    {"--unshare-user-try", &BwrapFlags::unshare_user_try, true},
    {"--unshare-ipc", &BwrapFlags::unshare_ipc, true},
    {"--unshare-pid", &BwrapFlags::unshare_pid, true},
    {"--unshare-net", &BwrapFlags::unshare_net, true},
    {"--share-net", &BwrapFlags::unshare_net, false},
    {"--unshare-uts", &BwrapFlags::unshare_uts, true},
    {"--unshare-cgroup", &BwrapFlags::unshare_cgroup, true},
    {"--unshare-cgroup-try", &BwrapFlags::unshare_cgroup_try, true},
    {"--new-session", &BwrapFlags::new_session, true},
    {"--die-with-parent", &BwrapFlags::die_with_parent, true},
    {"--disable-userns", &BwrapFlags::disable_userns, true},
};

// A whole argument read as a number in `base` of at most `max`; none for anything else.
std::optional<unsigned long> parse_number(std::string_view s, int base, unsigned long max) {
  unsigned long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v > max) return std::nullopt;
  return v;
}

std::optional<unsigned> parse_mode(std::string_view s) { return parse_number(s, 8, 07777); }

// A descriptor number as bwrap reads one (its limit is far above any real descriptor).
std::optional<int> parse_fd(std::string_view s) { return parse_number(s, 10, 1'000'000); }

// One line of bwrap.fds.
struct FdEntry {
  PathTable::Id path;
  int line;
  bool used = false;
};

// Reads the options one at a time; the first error stops it, and is the one reported.
class Parser {
 public:
  Parser(std::string_view text, std::shared_ptr<PathTable> paths)
      : text_(text), args_(ir::artifact_lines(text)) {
    out_.paths = std::move(paths);
  }

  // Reads the bwrap.fds table; its first malformed line is the error.
  void read_fds(std::string_view table) {
    by_descriptor_ = true;
    int line = 0;
    for (const std::string_view entry : ir::artifact_lines(table)) {
      ++line;
      auto table_error = [&](std::string message) {
        error_ = ir::error_at({"bwrap.fds", line, 1}, std::move(message));
      };
      const size_t space = entry.find(' ');
      if (space == std::string_view::npos) return table_error("expected 'FD PATH'");
      const auto fd = parse_fd(entry.substr(0, space));
      if (!fd)
        return table_error("'" + std::string(entry.substr(0, space)) +
                           "' is not a file descriptor");
      if (*fd <= 2)
        return table_error("descriptor " + std::to_string(*fd) +
                           " is standard input, output or error");
      if (entry.find_first_of(std::string_view("\r\0", 2)) != std::string_view::npos)
        return table_error("path contains a control character");
      const auto id = out_.paths->parse(entry.substr(space + 1));
      if (!id) return table_error(not_a_path_reason(entry.substr(space + 1), false));
      if (!fds_.emplace(*fd, FdEntry{*id, line}).second)
        return table_error("descriptor " + std::to_string(*fd) + " is listed twice");
    }
  }

  ir::Result<BwrapArgv> run() {
    if (error_) return *error_;
    // Two searches of the whole text rather than two of every argument: the first such
    // character is in the first argument that has one.
    const size_t control = std::min(text_.find('\r'), text_.find('\0'));
    if (control != std::string_view::npos)
      fail(static_cast<int>(std::count(text_.begin(), text_.begin() + control, '\n')) + 1,
           "argument contains a control character");
    while (i_ < args_.size() && !error_) step();
    if (!error_) check_complete();
    if (error_) return *error_;
    return std::move(out_);
  }

 private:
  void fail(int line, std::string message, std::string artifact = "bwrap.args") {
    if (!error_) error_ = ir::error_at({std::move(artifact), line, 1}, std::move(message));
  }

  int line() const { return static_cast<int>(i_) + 1; }

  // The n-th argument of the current option; an option name or the end of the file
  // where an argument belongs means the artifact was cut or shifted.
  std::optional<std::string_view> arg(std::string_view option, size_t n) {
    if (i_ + n >= args_.size()) {
      fail(line(), std::string(option) + ": missing argument");
      return std::nullopt;
    }
    return args_[i_ + n];
  }

  // Why `a` is no path of the table's spelling. A bound artifact's paths are host paths,
  // in which any name is a name (`/home/u/${proj}`), and `${HOME}/x` is relative, which
  // bwrap resolves against its working directory (red team fuzz19, Z19-3); a portable
  // one's may start at a symbolic root, below which no name may look like one.
  std::string not_a_path_reason(std::string_view a, bool roots_in_options) const {
    const std::string quoted = "'" + std::string(a) + "'";
    if (out_.paths->spelling() == PathSpelling::Bound)
      return quoted + " is not an absolute path" +
             (a.starts_with("${") ? " (a bound artifact names no variable; bwrap reads it as "
                                    "relative to its working directory)"
                                  : "");
    return quoted +
           (roots_in_options ? " is not an absolute path or ${VAR} path"
                             : " is not an absolute path") +
           " (in a portable artifact no name but a leading symbolic root's may start with "
           "'${')";
  }

  void not_a_path(std::string_view option, size_t n, std::string_view a) {
    fail(line() + static_cast<int>(n), std::string(option) + ": " + not_a_path_reason(a, true));
  }

  std::optional<PathTable::Id> path_arg(std::string_view option, size_t n) {
    auto a = arg(option, n);
    if (!a) return std::nullopt;
    auto id = out_.paths->parse(*a);
    if (!id) not_a_path(option, n, *a);
    return id;
  }

  // Adds `op`, the option and its count - 1 arguments, with its line and its text: those
  // lines joined by spaces, then `note`.
  void push(BwrapOp op, size_t count, const std::string& note = {}) {
    const char* first = args_[i_].data();
    const std::string_view last = args_[i_ + count - 1];
    std::string joined(first, last.data() + last.size());
    for (size_t k = i_ + 1; k < i_ + count; ++k) joined[args_[k].data() - 1 - first] = ' ';
    op.line = line();
    op.text = out_.texts->emplace_back(std::move(joined) + note);
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

  // What bwrap checks once every option is read.
  void check_complete() {
    if (pending_perms_) fail(perms_line_, "--perms must be followed by --tmpfs or --dir");
    if (pending_size_) fail(perms_line_, "--size must be followed by --tmpfs");
    const BwrapFlags& f = out_.flags;
    if (f.disable_userns && !f.unshare_user)
      fail(disable_userns_line_, "--disable-userns requires --unshare-user");
    if (f.seccomp_fd && fds_.count(*f.seccomp_fd))
      fail(fds_.at(*f.seccomp_fd).line,
           "descriptor " + std::to_string(*f.seccomp_fd) +
               " is both a bind source and the --seccomp program",
           "bwrap.fds");
    for (const auto& [fd, e] : fds_)
      if (!e.used)
        fail(e.line,
             "descriptor " + std::to_string(fd) + " is bound by no --bind-fd or --ro-bind-fd",
             "bwrap.fds");
  }

  void step() {
    const std::string_view a = args_[i_];
    if (a == "--") return fail(line(), "'--' ends bwrap's options; bwrap.args must stop before it");
    check_modifiers(a);
    if (error_ || read_flag(a) || read_setting(a)) return;
    const auto* op = std::find_if(std::begin(kOps), std::end(kOps),
                                  [&](const OpSpelling& s) { return s.option == a; });
    if (op != std::end(kOps)) return read_op(*op);
    if (a.starts_with("--"))
      return fail(line(), "option '" + std::string(a) + "' is outside the subset zpolicy verifies");
    fail(line(), "'" + std::string(a) + "' is not an option (an argument out of place?)");
  }

  // An option without an argument; false if `a` is none.
  bool read_flag(std::string_view a) {
    BwrapFlags& f = out_.flags;
    const auto* s = std::find_if(std::begin(kFlags), std::end(kFlags),
                                 [&](const FlagSpelling& s) { return s.option == a; });
    if (s != std::end(kFlags)) {
      if (s->flag == &BwrapFlags::disable_userns) disable_userns_line_ = line();
      f.*(s->flag) = s->value;
    } else if (a == "--unshare-all") {
      // bwrap's definition: the -try variants of user and cgroup.
      f.unshare_user_try = f.unshare_ipc = f.unshare_pid = f.unshare_uts = true;
      f.unshare_cgroup_try = f.unshare_net = true;
    } else {
      return false;
    }
    ++i_;
    return true;
  }

  // An option with one argument that is no setup operation; false if `a` is none.
  bool read_setting(std::string_view a) {
    BwrapFlags& f = out_.flags;
    const int at = line() + 1;  // the argument's line
    if (a == "--cap-drop") {
      if (const auto cap = arg(a, 1)) {
        if (*cap == "ALL")
          f.cap_drop_all = true;
        else if (!cap->starts_with("CAP_"))
          fail(at, "--cap-drop: unknown capability '" + std::string(*cap) + "'");
      }
    } else if (a == "--seccomp") {
      if (const auto fd = arg(a, 1)) {
        f.seccomp_fd = parse_fd(*fd);
        if (!f.seccomp_fd)
          fail(at, "--seccomp: '" + std::string(*fd) + "' is not a file descriptor");
        // bwrap loads whatever the descriptor holds: on a standard stream that is the
        // command's own input or output, never the seccomp.bpf verified (verify18).
        else if (*f.seccomp_fd <= 2)
          fail(at, "--seccomp: descriptor " + std::string(*fd) +
                       " is standard input, output or error, not seccomp.bpf");
      }
    } else if (a == "--chdir") {
      if (const auto dir = arg(a, 1)) {
        f.chdir = SymbolicPath::parse(*dir, out_.paths->spelling());
        if (!f.chdir) not_a_path(a, 1, *dir);
      }
    } else if (a == "--perms") {
      if (pending_perms_) {
        fail(line(), "--perms given twice for the same option");
      } else if (const auto mode = arg(a, 1)) {
        pending_perms_ = parse_mode(*mode);
        if (!pending_perms_) fail(at, "--perms takes an octal mode <= 07777");
        perms_line_ = line();
      }
    } else if (a == "--size") {
      if (pending_size_) {
        fail(line(), "--size given twice for the same option");
      } else if (const auto size = arg(a, 1)) {
        const auto bytes = parse_number(*size, 10, std::numeric_limits<long>::max());
        if (!bytes || *bytes == 0) fail(at, "--size takes a non-zero number of bytes");
        pending_size_ = true;
        perms_line_ = line();
      }
    } else {
      return false;
    }
    if (!error_) i_ += 2;
    return true;
  }

  // A setup operation, typed; its arguments are checked in the order they stand.
  void read_op(const OpSpelling& s) {
    BwrapOp op;
    op.kind = s.kind;
    op.try_source = s.try_source;
    const std::string_view a = s.option;
    std::string note;
    switch (s.args) {
      case Args::SourceDest:
        op.source = path_arg(a, 1);
        if (!op.source) return;
        break;
      case Args::FdDest: {
        const auto fd = bound_fd(a);
        if (!fd) return;
        op.source_fd = fd;
        op.source = fds_.at(*fd).path;
        // Traces name the host path the descriptor holds, not only its number.
        note = " (" + out_.paths->path(*op.source).str() + ")";
        break;
      }
      case Args::Dest:
        // Only --tmpfs and --dir get here with a modifier pending (check_modifiers).
        op.perms = std::exchange(pending_perms_, std::nullopt);
        pending_size_ = false;
        break;
      case Args::TargetDest: {
        const auto target = arg(a, 1);
        if (!target) return;
        if (target->empty()) return fail(line() + 1, "--symlink: empty target");
        op.link_target = out_.texts->emplace_back(*target);
        break;
      }
      case Args::ModeDest: {
        const auto v = arg(a, 1);
        if (!v) return;
        op.perms = parse_mode(*v);
        if (!op.perms) return fail(line() + 1, "--chmod takes an octal mode <= 07777");
        break;
      }
    }
    const size_t dest_at = s.args == Args::Dest ? 1 : 2;
    const auto dest = path_arg(a, dest_at);
    if (!dest) return;
    op.dest = *dest;
    push(std::move(op), dest_at + 1, note);
  }

  // The descriptor of a --bind-fd or --ro-bind-fd, marked used; none (the error set)
  // unless bwrap.fds names it and no other bind used it.
  std::optional<int> bound_fd(std::string_view a) {
    const auto fd_text = arg(a, 1);
    if (!fd_text) return std::nullopt;
    const auto fd = parse_fd(*fd_text);
    const std::string option(a);
    if (!fd) {
      fail(line() + 1, option + ": '" + std::string(*fd_text) + "' is not a file descriptor");
      return std::nullopt;
    }
    const std::string named = "descriptor " + std::to_string(*fd);
    const auto entry = fds_.find(*fd);
    if (!by_descriptor_)
      fail(line(), option + ": no bwrap.fds says what " + named + " holds");
    else if (entry == fds_.end())
      fail(line() + 1, option + ": " + named + " is not in bwrap.fds");
    else if (entry->second.used)
      fail(line() + 1,
           option + ": " + named + " is bound twice; bwrap closes it after the first mount");
    if (error_) return std::nullopt;
    entry->second.used = true;
    return fd;
  }

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
