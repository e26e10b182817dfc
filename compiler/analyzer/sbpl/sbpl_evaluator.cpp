#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <iterator>
#include <optional>
#include <set>

#include "compiler/analyzer/path_text.hpp"

namespace zpolicy::compiler {

// What bind_params adds to a profile. Filters are numbered by their place in
// SbplProfile::filters; a list is a require-* filter or a rule, and rule r has the number
// filters.size() + r, so that every list has one.
struct SbplIndex {
  // The literal and subpath filters by the path they match, in a tree of the paths'
  // '/'-separated pieces ("/a/b" is "", "a", "b"; node 0 is no piece at all), so that the
  // paths that hold a target (within) lie on its way down: one look-up per piece
  // of the target, not one per ancestor (which would hash O(depth²) bytes).
  struct Piece {
    uint32_t node;
    std::string_view name;  // views the profile's text or its parameters
    friend bool operator==(const Piece&, const Piece&) = default;
  };
  struct PieceHash {
    size_t operator()(const Piece& p) const {
      return std::hash<std::string_view>{}(p.name) * 31 + p.node;
    }
  };
  std::unordered_map<Piece, uint32_t, PieceHash> child;
  std::vector<std::vector<uint32_t>> filters_at;  // by node, ascending
  uint32_t slash = 0;  // the node of "/", which holds every absolute or symbolic path
  // By filter: the number of the list that holds it.
  std::vector<uint32_t> parent;
  // By filter and list: whether it matches a target that meets none of the filters
  // under it (its answer at a target nothing names). A leaf filter's is false.
  std::vector<bool> untouched;
  // By list: how many of its items have `untouched` set.
  std::vector<uint32_t> untouched_items;
  // The leaves the index does not hold (sysctl, service, address and process filters),
  // with their rule, ascending: a query tests each one that its operations can meet.
  std::vector<std::pair<int, uint32_t>> others;
};

namespace {

// --- S-expression reader --------------------------------------------------------------

// How deep lists may nest. zpolicy writes five levels at most ((allow OP (require-all
// (require-not (literal (param "X")))))); the bound keeps every walk over the forms
// shallow whatever the text, so that none of them can exhaust the stack.
constexpr size_t kMaxDepth = 16;

ir::Diagnostic error_at(int line, int col, std::string message) {
  return ir::error_at({"profile.sb", line, col}, std::move(message));
}

bool symbol_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '*' || c == '_' || c == '.';
}

class Reader {
 public:
  explicit Reader(std::string_view text) : t_(text) {}

  // One loop with a stack of the open lists, never a call per nesting level: the forms
  // read so far wait on `done`, and a list closing takes its items from its end.
  ir::Result<std::vector<Sexpr>> forms() {
    std::vector<Sexpr> done;
    std::vector<size_t> open;  // the lists not closed yet, innermost last, by place in `done`
    for (;;) {
      skip_space();
      if (pos_ == t_.size()) {
        if (open.empty()) return done;
        const Sexpr& list = done[open.back()];
        return error_at(list.line, list.col, "unbalanced '(': the list is never closed");
      }
      const char c = t_[pos_];
      if (c == ')') {
        if (open.empty()) return fail("unbalanced ')'");
        ++pos_;
        const auto first = done.begin() + static_cast<std::ptrdiff_t>(open.back() + 1);
        done[open.back()].items.assign(std::make_move_iterator(first),
                                       std::make_move_iterator(done.end()));
        done.erase(first, done.end());
        open.pop_back();
        continue;
      }
      done.push_back({Sexpr::Kind::List, {}, {}, line_, col()});
      if (c == '(') {
        if (open.size() == kMaxDepth)
          return fail("lists nested deeper than " + std::to_string(kMaxDepth) +
                      " are outside the subset zpolicy emits");
        ++pos_;
        open.push_back(done.size() - 1);
        continue;
      }
      if (auto err = atom(done.back())) return *err;
    }
  }

 private:
  // Reads the string, symbol or integer at the position into `e`.
  std::optional<ir::Diagnostic> atom(Sexpr& e) {
    const char c = t_[pos_];
    if (c == '"') {
      const auto stop = [](char s) { return s == '"' || s == '\\' || s == '\n' || s == '\0'; };
      const size_t end = std::find_if(t_.begin() + ++pos_, t_.end(), stop) - t_.begin();
      if (end == t_.size()) return error_at(e.line, e.col, "unterminated string");
      e.kind = Sexpr::Kind::String;
      e.atom = t_.substr(pos_, end - pos_);
      pos_ = end;
      if (t_[pos_] != '"')
        return fail("a backslash, newline or NUL in a string is outside the subset zpolicy emits");
      ++pos_;
      return std::nullopt;
    }
    if (c == '#')
      return fail("'#' (regex literals and booleans) is outside the subset zpolicy emits");
    const size_t end = std::find_if_not(t_.begin() + pos_, t_.end(), symbol_char) - t_.begin();
    e.atom = t_.substr(pos_, end - pos_);
    pos_ = end;
    if (e.atom.empty()) return fail(std::string("unexpected character '") + c + "'");
    const bool digits =
        std::all_of(e.atom.begin(), e.atom.end(), [](char d) { return d >= '0' && d <= '9'; });
    e.kind = digits ? Sexpr::Kind::Integer : Sexpr::Kind::Symbol;
    return std::nullopt;
  }

  void skip_space() {
    while (pos_ < t_.size()) {
      const char c = t_[pos_];
      if (c == ' ' || c == '\t') {
        ++pos_;
      } else if (c == '\n') {
        ++line_;
        line_start_ = ++pos_;
      } else if (c == ';') {
        pos_ = std::min(t_.find('\n', pos_), t_.size());
      } else {
        return;
      }
    }
  }

  // Only skip_space() passes a newline: strings and comments end before one.
  int col() const { return static_cast<int>(pos_ - line_start_) + 1; }
  ir::Diagnostic fail(std::string message) const { return error_at(line_, col(), std::move(message)); }

  std::string_view t_;
  size_t pos_ = 0;
  size_t line_start_ = 0;  // the position of the current line's first character
  int line_ = 1;
};

// --- Profile subset -------------------------------------------------------------------

// Every operation zpolicy may name. A wildcard covers the concrete operations that
// start with its stem, which is how Seatbelt groups them.
constexpr std::array<std::string_view, 30> kOperations = {
    "file-read*",       "file-read-data",   "file-read-metadata",   "file-read-xattr",
    "file-write*",      "file-write-data",  "file-write-create",    "file-write-unlink",
    "file-write-mode",  "file-write-xattr", "file-write-times",     "file-write-flags",
    "file-write-owner", "file-link",        "file-ioctl",           "file-map-executable",
    "process-exec",     "process-fork",     "process-info*",        "signal",
    "sysctl-read",      "mach-lookup",      "user-preference-read", "ipc-posix-sem",
    "pseudo-tty",       "network*",         "network-bind",         "network-inbound",
    "network-outbound", "system-socket",
};

// The profile operations that cover the concrete operation `op`: a rule applies to `op`
// exactly when its operation_bits meet these.
uint64_t covering(std::string_view op) {
  uint64_t bits = 0;
  for (size_t i = 0; i < kOperations.size(); ++i) {
    const std::string_view rule_op = kOperations[i];
    if (rule_op.ends_with('*') ? op.starts_with(rule_op.substr(0, rule_op.size() - 1))
                               : rule_op == op)
      bits |= uint64_t{1} << i;
  }
  return bits;
}

// What a filter tests, and so which operations it may qualify: a filter applied to an
// operation whose target is of another kind (a sysctl-name-prefix on file-write*) has no
// meaning the evaluator could vouch for, so the reader refuses it.
enum class TargetKind { Path, Sysctl, MachService, Address, Process, None };

TargetKind operation_target(std::string_view op) {
  if (op.starts_with("file-") || op == "process-exec") return TargetKind::Path;
  if (op == "sysctl-read") return TargetKind::Sysctl;
  if (op == "mach-lookup") return TargetKind::MachService;
  if (op.starts_with("network")) return TargetKind::Address;
  if (op == "signal" || op == "process-info*") return TargetKind::Process;
  return TargetKind::None;
}

// By SbplFilter::Kind: the head that names a filter, and what it tests (None for the
// require-* lists, which test through their items).
struct FilterSyntax {
  std::string_view head;
  TargetKind tests;
};
constexpr std::array<FilterSyntax, 11> kFilters = {{
    {"literal", TargetKind::Path},
    {"subpath", TargetKind::Path},
    {"require-all", TargetKind::None},
    {"require-any", TargetKind::None},
    {"require-not", TargetKind::None},
    {"target", TargetKind::Process},
    {"sysctl-name", TargetKind::Sysctl},
    {"sysctl-name-prefix", TargetKind::Sysctl},
    {"global-name", TargetKind::MachService},
    {"local", TargetKind::Address},
    {"remote", TargetKind::Address},
}};

const FilterSyntax& syntax(SbplFilter::Kind k) { return kFilters[static_cast<size_t>(k)]; }

// A port as the reader accepts it: "*", or a decimal number 0..65535 without a leading
// zero, so that comparing ports as text compares them as numbers.
bool canonical_port(std::string_view port) {
  if (port == "*") return true;
  if (port.empty() || port.size() > 5 || (port.size() > 1 && port.front() == '0')) return false;
  unsigned value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  return value <= 65535;
}

bool is_symbol(const Sexpr& e, std::string_view s) {
  return e.kind == Sexpr::Kind::Symbol && e.atom == s;
}
bool head_is(const Sexpr& e, std::string_view s) {
  return !e.items.empty() && is_symbol(e.items[0], s);
}
ir::Diagnostic error_at(const Sexpr& e, std::string message) {
  return error_at(e.line, e.col, message + ": " + print_sexpr(e));
}

std::optional<ir::Diagnostic> read_filter(const Sexpr& e, std::vector<SbplFilter>& filters, uint32_t at);

// A filter's head as error messages quote it: built only for an error.
std::string quoted(std::string_view head) { return "'" + std::string(head) + "'"; }

// (literal PATH) or (subpath PATH): PATH a constant absolute path or (param "NAME").
std::optional<ir::Diagnostic> read_path_filter(const Sexpr& e, std::string_view head,
                                          SbplFilter& f) {
  if (e.items.size() != 2) return error_at(e, quoted(head) + " takes one path");
  const Sexpr& arg = e.items[1];
  if (arg.kind == Sexpr::Kind::String) {
    if (!sbpl_normalized_path(arg.atom) || arg.atom.starts_with("${"))
      return error_at(e, "a constant path must be absolute and normalized");
    if (arg.atom.size() > kSbplMaxPathBytes)
      return error_at(e, "a path longer than " + std::to_string(kSbplMaxPathBytes) +
                             " bytes (macOS MAXPATHLEN) can never be matched");
    f.value = arg.atom;
    return std::nullopt;
  }
  if (head_is(arg, "param") && arg.items.size() == 2 && arg.items[1].kind == Sexpr::Kind::String) {
    f.value = arg.items[1].atom;
    f.is_param = true;
    return std::nullopt;
  }
  return error_at(e, quoted(head) + " takes a string or (param \"NAME\")");
}

// (require-all F...), (require-any F...) or (require-not F): its filters take the next
// free range of `filters`.
std::optional<ir::Diagnostic> read_compound_filter(const Sexpr& e, std::string_view head,
                                              std::vector<SbplFilter>& filters, uint32_t at) {
  const size_t n = e.items.size();
  if (n < 2 || (filters[at].kind == SbplFilter::Kind::RequireNot && n != 2))
    return error_at(e, quoted(head) + " has the wrong number of filters");
  const auto first = static_cast<uint32_t>(filters.size());
  filters[at].first_child = first;
  filters[at].end_child = first + static_cast<uint32_t>(n - 1);
  filters.resize(first + n - 1);
  for (size_t i = 1; i < n; ++i)
    if (auto err = read_filter(e.items[i], filters, first + static_cast<uint32_t>(i - 1)))
      return err;
  return std::nullopt;
}

// (local ip "HOST:PORT") or (remote ip "HOST:PORT"), HOST localhost or *.
std::optional<ir::Diagnostic> read_ip_filter(const Sexpr& e, std::string_view head, SbplFilter& f) {
  if (e.items.size() != 3 || !is_symbol(e.items[1], "ip") || e.items[2].kind != Sexpr::Kind::String)
    return error_at(e, "expected (" + std::string(head) + " ip \"HOST:PORT\")");
  const std::string_view addr = e.items[2].atom;
  const auto colon = addr.rfind(':');
  const std::string_view host = addr.substr(0, colon);
  if (colon == std::string_view::npos || (host != "localhost" && host != "*") ||
      !canonical_port(addr.substr(colon + 1)))
    return error_at(e, "an ip address must be \"localhost:PORT\" or \"*:PORT\", PORT * or 0-65535");
  f.value = addr;
  return std::nullopt;
}

// Reads `e` into filters[at]. A list's children take the next free range of `filters`;
// the recursion is as deep as the forms nest, at most kMaxDepth.
std::optional<ir::Diagnostic> read_filter(const Sexpr& e, std::vector<SbplFilter>& filters,
                                     uint32_t at) {
  using K = SbplFilter::Kind;
  if (e.kind != Sexpr::Kind::List || e.items.empty() || e.items[0].kind != Sexpr::Kind::Symbol)
    return error_at(e, "expected a filter");
  const std::string_view head = e.items[0].atom;
  const auto known = std::find_if(kFilters.begin(), kFilters.end(),
                                  [&](const FilterSyntax& f) { return f.head == head; });
  if (known == kFilters.end()) return error_at(e, quoted(head) + " is not a filter zpolicy emits");
  const auto kind = static_cast<SbplFilter::Kind>(known - kFilters.begin());
  filters[at].kind = kind;
  switch (kind) {
    case K::Literal:
    case K::Subpath:
      return read_path_filter(e, head, filters[at]);
    case K::RequireAll:
    case K::RequireAny:
    case K::RequireNot:
      return read_compound_filter(e, head, filters, at);
    case K::TargetSameSandbox:
      if (e.items.size() != 2 || !is_symbol(e.items[1], "same-sandbox"))
        return error_at(e, "only (target same-sandbox) is in the subset");
      return std::nullopt;
    case K::LocalIp:
    case K::RemoteIp:
      return read_ip_filter(e, head, filters[at]);
    default:
      break;
  }
  // The others, (sysctl-name ...), (sysctl-name-prefix ...) and (global-name ...).
  if (e.items.size() != 2 || e.items[1].kind != Sexpr::Kind::String)
    return error_at(e, quoted(head) + " takes one string");
  filters[at].value = e.items[1].atom;
  return std::nullopt;
}

ir::Result<SbplRule> read_rule(const Sexpr& e, std::vector<SbplFilter>& filters) {
  if (!(head_is(e, "allow") || head_is(e, "deny")))
    return error_at(e, "expected an (allow ...) or (deny ...) rule");
  SbplRule r;
  r.allow = is_symbol(e.items[0], "allow");
  r.line = e.line;
  size_t i = 1;
  for (; i < e.items.size() && e.items[i].kind == Sexpr::Kind::Symbol; ++i) {
    const std::string_view op = e.items[i].atom;
    const auto known = std::find(kOperations.begin(), kOperations.end(), op);
    if (known == kOperations.end())
      return error_at(e, "unknown or unsupported operation '" + std::string(op) + "'");
    r.operations.push_back(op);
    r.operation_bits |= uint64_t{1} << (known - kOperations.begin());
  }
  if (r.operations.empty()) return error_at(e, "a rule names at least one operation");
  r.first_filter = static_cast<uint32_t>(filters.size());
  r.end_filter = r.first_filter + static_cast<uint32_t>(e.items.size() - i);
  filters.resize(r.end_filter);
  for (uint32_t at = r.first_filter; i < e.items.size(); ++i, ++at)
    if (auto err = read_filter(e.items[i], filters, at)) return *err;
  // The rule's filters, nested ones included, take the range from its first on.
  for (size_t f = r.first_filter; f < filters.size(); ++f) {
    const TargetKind tests = syntax(filters[f].kind).tests;
    if (tests == TargetKind::None) continue;
    for (const auto& op : r.operations)
      if (operation_target(op) != tests)
        return error_at(
            e, "a filter on what '" + std::string(op) + "' does not act on is outside the subset");
  }
  return r;
}

// --- Matching -------------------------------------------------------------------------

// Calls f(filters, exact) with the path filters on each path that holds `target`
// (within), `exact` when that path is the target itself: the nodes on the target's
// way down the index (its '/'-bounded prefixes), and "/", which holds every absolute or
// symbolic path.
template <class F>
void for_each_holder(const SbplIndex& ix, std::string_view target, F&& f) {
  uint32_t node = 0;
  for (size_t start = 0;;) {
    const size_t end = std::min(target.find('/', start), target.size());
    const auto it = ix.child.find({node, target.substr(start, end - start)});
    if (it == ix.child.end()) break;
    node = it->second;
    f(ix.filters_at[node], end == target.size());
    if (end == target.size()) break;
    start = end + 1;
  }
  if (ix.slash && target != "/" && within("/", target))
    f(ix.filters_at[ix.slash], false);
}

bool ip_matches(std::string_view pattern, std::string_view target) {
  if (target.starts_with("unix:")) return false;
  auto pc = pattern.rfind(':'), tc = target.rfind(':');
  if (tc == std::string_view::npos) return false;
  auto phost = pattern.substr(0, pc), pport = pattern.substr(pc + 1);
  auto thost = target.substr(0, tc), tport = target.substr(tc + 1);
  return (phost == "*" || phost == thost) && (pport == "*" || pport == tport);
}

// A match, how specific it is (for a path filter that matched positively, twice its
// path's length, plus one for a literal; -1 for none), and that filter, for the trace.
struct Match {
  bool matched = false;
  long specificity = -1;
  const SbplFilter* via = nullptr;
};

// The path a literal or subpath filter matches, once bound; none for an undefined
// parameter, which matches nothing.
std::optional<std::string_view> bound_path(const SbplFilter& f) {
  if (!f.is_param) return f.value;
  if (f.param_value) return *f.param_value;
  return std::nullopt;
}

// A leaf filter at `target`. `strict`: the target is being created under
// SbplSubpathSelf::ExcludedOnCreate, so a subpath does not cover the target itself.
Match leaf_match(const SbplFilter& f, std::string_view target, bool strict) {
  using K = SbplFilter::Kind;
  switch (f.kind) {
    case K::Literal:
    case K::Subpath: {
      const auto path = bound_path(f);
      if (!path) return {};
      const bool hit = f.kind == K::Literal
                           ? target == *path
                           : within(*path, target) && !(strict && target == *path);
      if (!hit) return {};
      return {true, static_cast<long>(path->size()) * 2 + (f.kind == K::Literal ? 1 : 0), &f};
    }
    case K::TargetSameSandbox:
      return {target == "same-sandbox", -1, &f};
    case K::SysctlName:
    case K::GlobalName:
      return {target == f.value, -1, &f};
    case K::SysctlNamePrefix:
      return {target.starts_with(f.value), -1, &f};
    case K::LocalIp:
    case K::RemoteIp:
      return {ip_matches(f.value, target), -1, &f};
    case K::RequireAll:
    case K::RequireAny:
    case K::RequireNot:
      break;
  }
  return {};
}

// Which filters of a bound profile match one target. The invariant that makes it cheap:
// a filter none of whose leaves matches the target answers as it does at a target
// nothing names (SbplIndex::untouched, with no specificity and no filter to show). So
// only the leaves that can match are looked up (path filters through the index, others
// by testing each), they and the lists above them are marked, and only marked filters
// are evaluated; an unmarked item of a marked list counts by its untouched answer.
class Marks {
 public:
  using Edges = std::vector<std::pair<uint32_t, uint32_t>>;  // (list, item), sorted

  // `edges` link every marked filter to its list.
  Marks(const SbplProfile& p, const Edges& edges) : p_(p), ix_(*p.index), edges_(edges) {}

  // Adds the edges from leaf `f` up to its rule to `edges`, which mark_done() then sorts.
  static void mark(const SbplProfile& p, uint32_t f, Edges& edges) {
    for (uint32_t at = f; at < p.filters.size(); at = p.index->parent[at])
      edges.push_back({p.index->parent[at], at});
  }
  static void mark_done(Edges& edges) {
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  }

  // Rule r, which is marked, at `target`.
  Match rule(int r, std::string_view target, bool strict) const {
    const SbplRule& rule = p_.rules[static_cast<size_t>(r)];
    return alternatives(list_of(r), rule.first_filter, rule.end_filter, target, strict);
  }

 private:
  uint32_t list_of(int r) const {
    return static_cast<uint32_t>(p_.filters.size()) + static_cast<uint32_t>(r);
  }

  // The marked items of `list`, ascending.
  std::span<const std::pair<uint32_t, uint32_t>> marked(uint32_t list) const {
    auto lo =
        std::lower_bound(edges_.begin(), edges_.end(), std::pair<uint32_t, uint32_t>{list, 0});
    auto hi = std::lower_bound(lo, edges_.end(), std::pair<uint32_t, uint32_t>{list + 1, 0});
    return {lo, hi};
  }
  // How many of the list's unmarked items (of `size`; `items` are the marked ones) have
  // the untouched answer `answer`.
  size_t unmarked(uint32_t list, size_t size, std::span<const std::pair<uint32_t, uint32_t>> items,
                  bool answer) const {
    size_t marked_with = 0;
    for (const auto& [l, item] : items) marked_with += ix_.untouched[item] == answer;
    const size_t with = answer ? ix_.untouched_items[list] : size - ix_.untouched_items[list];
    return with - marked_with;
  }

  // Marked filter f.
  Match eval(uint32_t f, std::string_view target, bool strict) const {
    const SbplFilter& filter = p_.filters[f];
    switch (filter.kind) {
      case SbplFilter::Kind::RequireAll: {
        // The first most specific of its items, if all match.
        const auto items = marked(f);
        if (unmarked(f, filter.end_child - filter.first_child, items, false) > 0) return {};
        Match m{true, -1, nullptr};
        for (const auto& [l, item] : items) {
          const Match im = eval(item, target, strict);
          if (!im.matched) return {};
          if (im.specificity > m.specificity) m = im;
        }
        return m;
      }
      case SbplFilter::Kind::RequireAny:
        return alternatives(f, filter.first_child, filter.end_child, target, strict);
      case SbplFilter::Kind::RequireNot:
        return {!eval(filter.first_child, target, strict).matched, -1, nullptr};
      default:
        return leaf_match(filter, target, strict);
    }
  }

  // The first most specific match among the items [first, end) of `list`.
  Match alternatives(uint32_t list, uint32_t first, uint32_t end, std::string_view target,
                     bool strict) const {
    Match best;
    uint32_t best_at = end;
    const auto items = marked(list);
    for (const auto& [l, item] : items) {
      const Match m = eval(item, target, strict);
      if (m.matched && (!best.matched || m.specificity > best.specificity)) {
        best = m;
        best_at = item;
      }
    }
    if (unmarked(list, end - first, items, true) == 0) return best;
    // An unmarked item that matches does so as {true, -1, nullptr}: it decides unless a marked
    // match is more specific, or as specific (-1, a non-path leaf) and earlier.
    const Match untouched{true, -1, nullptr};
    if (!best.matched || (best.specificity == -1 && best.via == nullptr)) return untouched;
    if (best.specificity > -1) return best;
    for (uint32_t item = first; item < best_at; ++item)
      if (ix_.untouched[item] &&
          std::none_of(items.begin(), items.end(), [&](const auto& e) { return e.second == item; }))
        return untouched;
    return best;
  }

  const SbplProfile& p_;
  const SbplIndex& ix_;
  const Edges& edges_;
};

// A rule and its match.
struct RuleMatch {
  int rule = -1;
  Match m;
};

// The rules that match a target, ascending: under the included subpath reading, and under
// the strict one when a subpath equal to the target is among the filters it meets (else
// the two readings agree and `strict` is empty).
struct Matched {
  std::vector<RuleMatch> included, strict;
  bool readings_differ = false;
};

// The rules of `p` that match `target`: of the candidate rules (by rule), of which
// `untouched` (ascending) match a target no filter names; `tested` are the leaves of the
// candidates that the index does not hold (the non-path ones).
Matched match_rules(const SbplProfile& p, const std::vector<bool>& candidate,
                    const std::vector<int>& untouched, const std::vector<uint32_t>& tested,
                    std::string_view target) {
  Marks::Edges edges;
  Matched out;
  for_each_holder(*p.index, target, [&](const std::vector<uint32_t>& filters, bool exact) {
    for (uint32_t f : filters) {
      // A literal matches only the target itself.
      const bool subpath = p.filters[f].kind == SbplFilter::Kind::Subpath;
      if (subpath || exact) Marks::mark(p, f, edges);
      out.readings_differ = out.readings_differ || (subpath && exact);
    }
  });
  for (uint32_t f : tested)
    if (leaf_match(p.filters[f], target, false).matched) Marks::mark(p, f, edges);
  Marks::mark_done(edges);
  const Marks marks(p, edges);
  // The marked rules are the last edges, ascending; each is merged into `untouched`.
  auto first_rule = std::lower_bound(edges.begin(), edges.end(),
                                     std::pair<uint32_t, uint32_t>{p.filters.size(), 0});
  for (const bool strict : {false, true}) {
    if (strict && !out.readings_differ) break;
    std::vector<RuleMatch>& list = strict ? out.strict : out.included;
    auto u = untouched.begin();
    for (auto e = first_rule; e != edges.end() || u != untouched.end();) {
      const int marked =
          e == edges.end() ? INT32_MAX : static_cast<int>(e->first - p.filters.size());
      const int r = std::min(marked, u == untouched.end() ? INT32_MAX : *u);
      Match m{true, -1, nullptr};
      if (r == marked) {
        m = marks.rule(r, target, strict);
        while (e != edges.end() && static_cast<int>(e->first - p.filters.size()) == r) ++e;
      }
      if (u != untouched.end() && *u == r) ++u;
      if (candidate[static_cast<size_t>(r)] && m.matched) list.push_back({r, m});
    }
  }
  return out;
}

// The entry of `matched` (ascending rules) that decides under each precedence reading,
// indexed by SbplPrecedence, among the rules that name an operation of `covering`; -1:
// none matches, the default decides.
std::array<int, 4> chosen(const SbplProfile& profile, const std::vector<RuleMatch>& matched,
                          uint64_t covering) {
  std::array<int, 4> out;
  out.fill(-1);
  int& last = out[static_cast<size_t>(SbplPrecedence::LastMatchWins)];
  int& deny_wins = out[static_cast<size_t>(SbplPrecedence::DenyWins)];
  int& first = out[static_cast<size_t>(SbplPrecedence::FirstMatchWins)];
  int& most_specific = out[static_cast<size_t>(SbplPrecedence::MostSpecificWins)];
  for (int n = 0; n < static_cast<int>(matched.size()); ++n) {
    const SbplRule& rule = profile.rules[static_cast<size_t>(matched[n].rule)];
    if (!(rule.operation_bits & covering)) continue;
    if (first < 0) first = deny_wins = most_specific = n;
    last = n;
    if (!rule.allow && profile.rules[static_cast<size_t>(matched[deny_wins].rule)].allow)
      deny_wins = n;
    const long s = matched[n].m.specificity, best = matched[most_specific].m.specificity;
    if (s > best || (s == best && !rule.allow)) most_specific = n;
  }
  return out;
}

// A leaf filter as written, a parameter with its value.
std::string filter_text(const SbplFilter& f) {
  using K = SbplFilter::Kind;
  if (f.kind == K::TargetSameSandbox) return "(target same-sandbox)";
  const std::string head(syntax(f.kind).head), value = '"' + std::string(f.value) + '"';
  if (f.kind == K::LocalIp || f.kind == K::RemoteIp) return "(" + head + " ip " + value + ")";
  if (!f.is_param) return "(" + head + " " + value + ")";
  const std::string out = "(" + head + " (param " + value + "))";
  return f.param_value ? out + " = " + std::string(*f.param_value) : out;
}

// The decision of entry `at` of `matched` (-1: the default), with its trace.
SbplDecision decision(const SbplProfile& profile, const std::vector<RuleMatch>& matched, int at,
                      bool with_trace) {
  SbplDecision d;
  if (at < 0) {
    d.allowed = profile.default_allow;
    if (with_trace)
      d.trace =
          std::string(d.allowed ? "allowed" : "denied") + " by the default rule (no rule matches)";
    return d;
  }
  const RuleMatch& rm = matched[static_cast<size_t>(at)];
  const SbplRule& r = profile.rules[static_cast<size_t>(rm.rule)];
  d.allowed = r.allow;
  d.rule = rm.rule;
  if (!with_trace) return d;
  std::string head = r.allow ? "(allow" : "(deny";
  for (const auto& op : r.operations) head += " " + std::string(op);
  head += r.first_filter == r.end_filter ? ")" : " ...)";
  d.trace = std::string(r.allow ? "allowed" : "denied") + " by rule " + std::to_string(rm.rule) +
            " (profile.sb line " + std::to_string(r.line) + ") " + head;
  if (rm.m.via) d.trace += " via " + filter_text(*rm.m.via);
  return d;
}

std::vector<std::string> collect_params(const SbplProfile& profile, bool unbound_only) {
  std::set<std::string> names;
  for (const auto& f : profile.filters)
    if (f.is_param && !(unbound_only && f.param_value)) names.emplace(f.value);
  return {names.begin(), names.end()};
}

// The node of `path` in the index, made if new.
uint32_t index_path(SbplIndex& ix, std::string_view path) {
  uint32_t node = 0;
  for (size_t start = 0;;) {
    const size_t end = std::min(path.find('/', start), path.size());
    const auto [it, fresh] = ix.child.try_emplace({node, path.substr(start, end - start)},
                                                  static_cast<uint32_t>(ix.filters_at.size()));
    if (fresh) ix.filters_at.emplace_back();
    node = it->second;
    if (end == path.size()) break;
    start = end + 1;
  }
  if (path == "/") ix.slash = node;
  return node;
}

// Sets SbplIndex::untouched and untouched_items of every filter and rule of `p`, whose
// parents `ix` holds. Items come after their list, so a walk from the last filter to the
// first meets every item before its list.
void mark_untouched(const SbplProfile& p, SbplIndex& ix) {
  const size_t filters = p.filters.size(), lists = filters + p.rules.size();
  ix.untouched.assign(lists, false);
  ix.untouched_items.assign(lists, 0);
  for (size_t r = 0; r < p.rules.size(); ++r)
    ix.untouched[filters + r] = p.rules[r].first_filter == p.rules[r].end_filter;
  for (size_t f = filters; f-- > 0;) {
    const SbplFilter& filter = p.filters[f];
    const size_t items = filter.end_child - filter.first_child;
    if (filter.kind == SbplFilter::Kind::RequireAll)
      ix.untouched[f] = ix.untouched_items[f] == items;
    else if (filter.kind == SbplFilter::Kind::RequireAny)
      ix.untouched[f] = ix.untouched_items[f] > 0;
    else if (filter.kind == SbplFilter::Kind::RequireNot)
      ix.untouched[f] = ix.untouched_items[f] == 0;
    if (ix.untouched[f]) {
      ++ix.untouched_items[ix.parent[f]];
      if (ix.parent[f] >= filters) ix.untouched[ix.parent[f]] = true;
    }
  }
}

}  // namespace

ir::Result<std::vector<Sexpr>> parse_sexprs(std::string_view text) {
  return Reader(text).forms();
}

std::string print_sexpr(const Sexpr& e) {
  switch (e.kind) {
    case Sexpr::Kind::Symbol:
    case Sexpr::Kind::Integer:
      return std::string(e.atom);
    case Sexpr::Kind::String:
      return '"' + std::string(e.atom) + '"';
    case Sexpr::Kind::List:
      break;
  }
  std::string out = "(";
  for (size_t i = 0; i < e.items.size(); ++i) out += (i ? " " : "") + print_sexpr(e.items[i]);
  return out + ")";
}

bool sbpl_normalized_path(std::string_view v) {
  if (v == "/") return true;
  if (v.starts_with("${")) {
    auto close = v.find('}');
    if (close == std::string_view::npos) return false;
    v.remove_prefix(close + 1);
    if (v.empty()) return true;
  }
  if (!v.starts_with('/') || v.ends_with('/')) return false;
  for (size_t start = 1; start <= v.size();) {
    const size_t end = std::min(v.find('/', start), v.size());
    const std::string_view component = v.substr(start, end - start);
    if (component.empty() || component == "." || component == "..") return false;
    start = end + 1;
  }
  return true;
}

ir::Result<SbplProfile> parse_sbpl(std::string_view text) {
  SbplProfile p;
  p.text = std::make_shared<const std::string>(text);
  const auto forms = parse_sexprs(*p.text);
  if (!forms) return forms.error();
  if (forms->empty()) return error_at(1, 1, "empty profile");
  const Sexpr& v = (*forms)[0];
  if (!(head_is(v, "version") && v.items.size() == 2 && v.items[1].kind == Sexpr::Kind::Integer &&
        v.items[1].atom == "1"))
    return error_at(v, "the profile must start with (version 1)");
  if (forms->size() == 1) return error_at(v.line, v.col, "no (deny default) after (version 1)");
  const Sexpr& d = (*forms)[1];
  if (!((head_is(d, "deny") || head_is(d, "allow")) && d.items.size() == 2 &&
        is_symbol(d.items[1], "default")))
    return error_at(d, "the second form must be (deny default) or (allow default)");
  p.default_allow = is_symbol(d.items[0], "allow");
  p.default_line = d.line;
  for (size_t i = 2; i < forms->size(); ++i) {
    const Sexpr& e = (*forms)[i];
    if (head_is(e, "version")) return error_at(e, "a second (version ...)");
    if (e.items.size() == 2 && is_symbol(e.items[1], "default"))
      return error_at(e, "a second default rule");
    auto r = read_rule(e, p.filters);
    if (!r) return r.error();
    p.rules.push_back(std::move(*r));
  }
  return p;
}

bool sbpl_rule_covers(const SbplRule& rule, std::string_view operation) {
  return (rule.operation_bits & covering(operation)) != 0;
}

std::vector<std::string> referenced_params(const SbplProfile& profile) {
  return collect_params(profile, false);
}

std::vector<std::string> unbound_params(const SbplProfile& bound) {
  return collect_params(bound, true);
}

SbplProfile bind_params(SbplProfile profile, const SbplParams& params) {
  auto ix = std::make_shared<SbplIndex>();
  ix->filters_at.emplace_back();
  const size_t filters = profile.filters.size();
  ix->parent.resize(filters);
  for (size_t r = 0; r < profile.rules.size(); ++r)
    for (uint32_t f = profile.rules[r].first_filter; f < profile.rules[r].end_filter; ++f)
      ix->parent[f] = static_cast<uint32_t>(filters + r);
  for (uint32_t f = 0; f < filters; ++f) {
    SbplFilter& filter = profile.filters[f];
    for (uint32_t c = filter.first_child; c < filter.end_child; ++c) ix->parent[c] = f;
    if (filter.is_param)
      if (auto it = params.find(filter.value); it != params.end()) filter.param_value = &it->second;
    if (const auto path = filter.is_path() ? bound_path(filter) : std::nullopt)
      ix->filters_at[index_path(*ix, *path)].push_back(f);
  }
  for (size_t r = 0; r < profile.rules.size(); ++r) {
    const size_t end = r + 1 < profile.rules.size() ? profile.rules[r + 1].first_filter : filters;
    for (uint32_t f = profile.rules[r].first_filter; f < end; ++f)
      if (!profile.filters[f].is_path() &&
          profile.filters[f].first_child == profile.filters[f].end_child)
        ix->others.emplace_back(static_cast<int>(r), f);
  }
  mark_untouched(profile, *ix);
  profile.index = std::move(ix);
  return profile;
}

std::string SbplModel::str() const {
  static constexpr std::array<const char*, 4> kNames = {"last-match", "deny-wins", "first-match",
                                                        "most-specific"};
  return std::string(kNames[static_cast<size_t>(precedence)]) +
         (subpath_self == SbplSubpathSelf::Included ? "/subpath-includes-self"
                                                    : "/subpath-excludes-self-on-create");
}

const std::vector<SbplModel>& all_sbpl_models() {
  static const std::vector<SbplModel> models = [] {
    std::vector<SbplModel> out;
    for (auto s : {SbplSubpathSelf::Included, SbplSubpathSelf::ExcludedOnCreate})
      for (auto p : {SbplPrecedence::LastMatchWins, SbplPrecedence::DenyWins,
                     SbplPrecedence::FirstMatchWins, SbplPrecedence::MostSpecificWins})
        out.push_back({p, s});
    return out;
  }();
  return models;
}

SbplDecision decide(const SbplProfile& profile, std::string_view operation, std::string_view target,
                    const SbplParams& params, const SbplModel& model) {
  // all_sbpl_models()[m] is precedence m % 4 under subpath reading m / 4.
  const auto m =
      static_cast<size_t>(model.subpath_self) * 4 + static_cast<size_t>(model.precedence);
  return decide_all_models(profile, operation, target, params)[m];
}

std::vector<SbplDecision> decide_all_models(const SbplProfile& profile, std::string_view operation,
                                            std::string_view target, const SbplParams& params,
                                            bool with_trace) {
  if (!profile.index)
    return decide_all_models(bind_params(profile, params), operation, target, params, with_trace);
  return SbplTargetQuery(profile, {std::string(operation)}).decisions(target, with_trace);
}

SbplTargetQuery::SbplTargetQuery(const SbplProfile& profile,
                                 const std::vector<std::string>& operations)
    : profile_(profile), candidate_(profile.rules.size(), false) {
  uint64_t any = 0;
  for (const auto& op : operations) {
    covering_.push_back(covering(op));
    create_.push_back(op == "file-write-create");
    any |= covering_.back();
  }
  for (size_t r = 0; r < profile.rules.size(); ++r) {
    if (!(profile.rules[r].operation_bits & any)) continue;
    candidate_[r] = true;
    if (profile.index->untouched[profile.filters.size() + r])
      untouched_.push_back(static_cast<int>(r));
  }
  for (const auto& [r, f] : profile.index->others)
    if (candidate_[static_cast<size_t>(r)]) tested_.push_back(f);
  // Two operations that the same rules name get the same answers: those covering both
  // (file-write* for file-write-mode and file-write-owner), when no rule names one alone.
  // A constant saved, but a large one: zpolicy's profiles put the eighteen path
  // operations in a few such groups (docs/benchmarks.md, "lean20").
  uint64_t named = 0;
  for (const SbplRule& r : profile.rules) named |= r.operation_bits;
  for (size_t k = 0; k < covering_.size(); ++k) {
    size_t j = 0;
    while ((covering_[j] & named) != (covering_[k] & named) || create_[j] != create_[k]) ++j;
    same_as_.push_back(j);
  }
}

std::vector<int> SbplTargetQuery::rules_matched_per_target() const {
  std::vector<int> out;
  for (size_t r = 0; r < profile_.rules.size(); ++r) {
    const auto filters = profile_.filters_of(profile_.rules[r]);
    if (candidate_[r] &&
        (filters.empty() || !std::all_of(filters.begin(), filters.end(),
                                         [](const SbplFilter& f) { return f.is_path(); })))
      out.push_back(static_cast<int>(r));
  }
  return out;
}

std::vector<uint32_t> SbplTargetQuery::allowed(std::string_view target) const {
  const Matched m = match_rules(profile_, candidate_, untouched_, tested_, target);
  std::vector<uint32_t> out(covering_.size(), 0);
  for (size_t k = 0; k < covering_.size(); ++k) {
    if (same_as_[k] < k) {
      out[k] = out[same_as_[k]];
      continue;
    }
    // Model i is precedence i % 4 under subpath reading i / 4 (all_sbpl_models()); the
    // readings differ only for creation, and only where a subpath names the target.
    const bool apart = create_[k] && m.readings_differ;
    for (const bool strict : {false, true}) {
      if (strict && !apart) break;
      const auto& matched = strict ? m.strict : m.included;
      const auto deciding = chosen(profile_, matched, covering_[k]);
      uint32_t allowed = 0;  // a bit per precedence
      for (size_t p = 0; p < deciding.size(); ++p)
        if (deciding[p] < 0 ? profile_.default_allow
                            : profile_.rules[matched[deciding[p]].rule].allow)
          allowed |= uint32_t{1} << p;
      out[k] |= strict ? allowed << 4 : apart ? allowed : allowed | allowed << 4;
    }
  }
  return out;
}

std::vector<SbplDecision> SbplTargetQuery::decisions(std::string_view target,
                                                     bool with_trace) const {
  const Matched m = match_rules(profile_, candidate_, untouched_, tested_, target);
  std::vector<SbplDecision> out;
  for (const SbplModel& model : all_sbpl_models()) {
    const bool strict =
        model.subpath_self == SbplSubpathSelf::ExcludedOnCreate && create_[0] && m.readings_differ;
    const auto& matched = strict ? m.strict : m.included;
    out.push_back(
        decision(profile_, matched,
                 chosen(profile_, matched, covering_[0])[static_cast<size_t>(model.precedence)],
                 with_trace));
  }
  return out;
}

}  // namespace zpolicy::compiler
