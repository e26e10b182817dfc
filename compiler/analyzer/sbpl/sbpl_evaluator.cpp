#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <optional>
#include <set>

#include "compiler/analyzer/sbpl/sbpl_subset.hpp"
#include "compiler/analyzer/symbolic_path.hpp"

namespace zpolicy::compiler {
namespace {

using sbpl_subset::kChars;
using sbpl_subset::kOperations;
using sbpl_subset::operation_bit;

// --- S-expression reader --------------------------------------------------------------

// A form, in one preorder array of the text's forms. Atoms point into the text, and a
// list's items follow it: the forms live only until the rules are read from them.
struct Node {
  Sexpr::Kind kind = Sexpr::Kind::List;
  std::string_view atom;  // Symbol, String (unquoted) or Integer text
  int line = 0, col = 0;
  uint32_t size = 0;  // List: the number of items
  uint32_t end = 0;   // the index just past the node and its items
};
using Nodes = std::vector<Node>;

class Reader {
 public:
  explicit Reader(std::string_view text) : t_(text) {}

  // How deep lists may nest. zpolicy writes five levels at most ((allow OP (require-all
  // (require-not (literal (param "X")))))); the bound keeps every walk over the forms
  // (filters, printing) shallow whatever the text, so that none of them can exhaust the
  // stack.
  static constexpr size_t kMaxDepth = 16;

  // Every form of the text: the top-level ones start at 0 and at each one's `end`. One
  // loop with a stack of the open lists, never a call per nesting level.
  std::variant<Nodes, SbplError> all() {
    std::vector<uint32_t> open;  // the lists not closed yet, innermost last
    for (;;) {
      skip_space();
      if (pos_ >= t_.size()) {
        if (open.empty()) return std::move(nodes_);
        const Node& list = nodes_[open.back()];
        return fail_at(list.line, list.col, "unbalanced '(': the list is never closed");
      }
      const char c = peek();
      if (c == ')') {
        if (open.empty()) return fail("unbalanced ')'");
        ++pos_;
        nodes_[open.back()].end = static_cast<uint32_t>(nodes_.size());
        open.pop_back();
        continue;
      }
      if (!open.empty()) ++nodes_[open.back()].size;
      const auto at = static_cast<uint32_t>(nodes_.size());
      nodes_.push_back({Sexpr::Kind::List, {}, line_, col()});
      if (c == '(') {
        if (open.size() == kMaxDepth)
          return fail("lists nested deeper than " + std::to_string(kMaxDepth) +
                      " are outside the subset zpolicy emits");
        ++pos_;
        open.push_back(at);
        continue;
      }
      if (auto err = atom(nodes_[at])) return *err;
      nodes_[at].end = at + 1;
    }
  }

 private:
  // Reads the string, symbol or integer at the position into `e`.
  std::optional<SbplError> atom(Node& e) {
    const char c = peek();
    if (c == '"') {
      ++pos_;
      e.kind = Sexpr::Kind::String;
      size_t end = pos_;
      while (end < t_.size() && !kChars.string_stop[static_cast<unsigned char>(t_[end])]) ++end;
      e.atom = t_.substr(pos_, end - pos_);
      pos_ = end;
      if (end == t_.size()) return fail_at(e.line, e.col, "unterminated string");
      if (peek() != '"')
        return fail("a backslash, newline or NUL in a string is outside the subset zpolicy emits");
      ++pos_;
      return std::nullopt;
    }
    if (c == '#')
      return fail("'#' (regex literals and booleans) is outside the subset zpolicy emits");
    size_t end = pos_;
    while (end < t_.size() && kChars.symbol[static_cast<unsigned char>(t_[end])]) ++end;
    e.atom = t_.substr(pos_, end - pos_);
    pos_ = end;
    if (e.atom.empty()) return fail(std::string("unexpected character '") + c + "'");
    // Told apart after the scan: most atoms are symbols, which show a letter at once.
    const bool digits =
        std::all_of(e.atom.begin(), e.atom.end(), [](char d) { return d >= '0' && d <= '9'; });
    e.kind = digits ? Sexpr::Kind::Integer : Sexpr::Kind::Symbol;
    return std::nullopt;
  }

  void skip_space() {
    while (pos_ < t_.size()) {
      const char c = peek();
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

  char peek() const { return t_[pos_]; }
  // Only skip_space() passes a newline: strings and comments end before one.
  int col() const { return static_cast<int>(pos_ - line_start_) + 1; }
  SbplError fail(std::string message) const { return fail_at(line_, col(), std::move(message)); }
  static SbplError fail_at(int line, int col, std::string message) {
    return SbplError{line, col, std::move(message)};
  }

  std::string_view t_;
  size_t pos_ = 0;
  size_t line_start_ = 0;  // the position of the current line's first character
  int line_ = 1;
  Nodes nodes_;
};

Sexpr to_sexpr(const Nodes& nodes, uint32_t i) {
  const Node& n = nodes[i];
  Sexpr e{n.kind, std::string(n.atom), {}, n.line, n.col};
  e.items.reserve(n.size);
  for (uint32_t c = i + 1; c < n.end; c = nodes[c].end) e.items.push_back(to_sexpr(nodes, c));
  return e;
}

// --- Profile subset -------------------------------------------------------------------

bool operation_covers(std::string_view rule_op, std::string_view op) {
  if (rule_op.ends_with('*')) return op.starts_with(rule_op.substr(0, rule_op.size() - 1));
  return rule_op == op;
}

// The profile operations that cover the concrete operation `op`: a rule applies to `op`
// exactly when its operation_bits meet these.
uint64_t covering(std::string_view op) {
  uint64_t bits = 0;
  for (size_t i = 0; i < kOperations.size(); ++i)
    if (operation_covers(kOperations[i], op)) bits |= uint64_t{1} << i;
  return bits;
}

// print_sexpr, appending to one string.
void print_to(const Sexpr& e, std::string& out) {
  switch (e.kind) {
    case Sexpr::Kind::Symbol:
    case Sexpr::Kind::Integer:
      out += e.atom;
      return;
    case Sexpr::Kind::String:
      out += '"';
      out += e.atom;
      out += '"';
      return;
    case Sexpr::Kind::List:
      out += '(';
      for (size_t i = 0; i < e.items.size(); ++i) {
        if (i) out += ' ';
        print_to(e.items[i], out);
      }
      out += ')';
      return;
  }
}

// A list form of the read text and its items by position.
class Form {
 public:
  Form(const Nodes& nodes, uint32_t i) : nodes_(&nodes), i_(i) {}
  const Node& node() const { return (*nodes_)[i_]; }
  uint32_t size() const { return node().kind == Sexpr::Kind::List ? node().size : 0; }
  Form item(uint32_t k) const {
    uint32_t c = i_ + 1;
    while (k--) c = (*nodes_)[c].end;
    return {*nodes_, c};
  }
  // The item after this one in their list.
  Form next() const { return {*nodes_, node().end}; }
  Sexpr::Kind kind() const { return node().kind; }
  std::string_view atom() const { return node().atom; }
  bool is_symbol(std::string_view s) const { return kind() == Sexpr::Kind::Symbol && atom() == s; }
  bool head_is(std::string_view s) const { return size() > 0 && item(0).is_symbol(s); }
  SbplError error(std::string message) const {
    message += ": ";
    print_to(to_sexpr(*nodes_, i_), message);
    return SbplError{node().line, node().col, std::move(message)};
  }

 private:
  const Nodes* nodes_;
  uint32_t i_;
};

// The filter kind a head names, if any.
std::optional<SbplFilter::Kind> filter_kind(std::string_view head) {
  using K = SbplFilter::Kind;
  static constexpr std::array<std::pair<std::string_view, K>, 11> kHeads = {{
      {"literal", K::Literal},
      {"subpath", K::Subpath},
      {"require-all", K::RequireAll},
      {"require-any", K::RequireAny},
      {"require-not", K::RequireNot},
      {"target", K::TargetSameSandbox},
      {"sysctl-name", K::SysctlName},
      {"sysctl-name-prefix", K::SysctlNamePrefix},
      {"global-name", K::GlobalName},
      {"local", K::LocalIp},
      {"remote", K::RemoteIp},
  }};
  for (const auto& [word, kind] : kHeads)
    if (word == head) return kind;
  return std::nullopt;
}

// Reads `e` into filters[at]. A list's children take the next free range of `filters`,
// so that every filter of a profile lives in one array.
std::optional<SbplError> filter_of(const Form& e, std::vector<SbplFilter>& filters, uint32_t at) {
  using K = SbplFilter::Kind;
  // Not used once the children are added: `filters` may move.
  SbplFilter& f = filters[at];
  if (e.kind() != Sexpr::Kind::List || e.size() == 0 || e.item(0).kind() != Sexpr::Kind::Symbol)
    return e.error("expected a filter");
  const std::string_view head = e.item(0).atom();
  auto quoted = [&] { return "'" + std::string(head) + "'"; };
  const auto n = e.size();
  const auto kind = filter_kind(head);
  if (!kind) return e.error(quoted() + " is not a filter zpolicy emits");
  f.kind = *kind;
  if (f.kind == K::Literal || f.kind == K::Subpath) {
    if (n != 2) return e.error(quoted() + " takes one path");
    const Form arg = e.item(1);
    if (arg.kind() == Sexpr::Kind::String) {
      if (!sbpl_subset::normalized_path(arg.atom()) || arg.atom().starts_with("${"))
        return e.error("a constant path must be absolute and normalized");
      if (arg.atom().size() > sbpl_subset::kMaxPathBytes)
        return e.error("a path longer than " + std::to_string(sbpl_subset::kMaxPathBytes) +
                       " bytes (macOS MAXPATHLEN) can never be matched");
      f.value = arg.atom();
      return std::nullopt;
    }
    if (arg.head_is("param") && arg.size() == 2 && arg.item(1).kind() == Sexpr::Kind::String) {
      f.value = arg.item(1).atom();
      f.is_param = true;
      return std::nullopt;
    }
    return e.error(quoted() + " takes a string or (param \"NAME\")");
  }
  if (f.kind == K::RequireAll || f.kind == K::RequireAny || f.kind == K::RequireNot) {
    if (n < 2 || (f.kind == K::RequireNot && n != 2))
      return e.error(quoted() + " has the wrong number of filters");
    const auto first = static_cast<uint32_t>(filters.size());
    f.first_child = first;
    f.end_child = first + (n - 1);
    filters.resize(f.end_child);
    Form c = e.item(1);
    for (uint32_t i = 1; i < n; ++i, c = c.next()) {
      if (auto err = filter_of(c, filters, first + i - 1)) return err;
    }
    return std::nullopt;
  }
  if (f.kind == K::TargetSameSandbox) {
    if (n != 2 || !e.item(1).is_symbol("same-sandbox"))
      return e.error("only (target same-sandbox) is in the subset");
    return std::nullopt;
  }
  if (f.kind == K::LocalIp || f.kind == K::RemoteIp) {
    if (n != 3 || !e.item(1).is_symbol("ip") || e.item(2).kind() != Sexpr::Kind::String)
      return e.error("expected (" + std::string(head) + " ip \"HOST:PORT\")");
    const std::string_view addr = e.item(2).atom();
    auto colon = addr.rfind(':');
    std::string_view host = addr.substr(0, colon);
    if (colon == std::string_view::npos || (host != "localhost" && host != "*") ||
        !sbpl_subset::canonical_port(addr.substr(colon + 1)))
      return e.error("an ip address must be \"localhost:PORT\" or \"*:PORT\", PORT * or 0-65535");
    f.value = addr;
    return std::nullopt;
  }
  // The others, (sysctl-name ...), (sysctl-name-prefix ...) and (global-name ...).
  if (n != 2 || e.item(1).kind() != Sexpr::Kind::String)
    return e.error(quoted() + " takes one string");
  f.value = e.item(1).atom();
  return std::nullopt;
}

// What a leaf filter tests; none for (require-...), which tests through its children.
std::optional<sbpl_subset::TargetKind> filter_target(SbplFilter::Kind k) {
  using K = SbplFilter::Kind;
  using T = sbpl_subset::TargetKind;
  switch (k) {
    case K::Literal:
    case K::Subpath:
      return T::Path;
    case K::SysctlName:
    case K::SysctlNamePrefix:
      return T::Sysctl;
    case K::GlobalName:
      return T::MachService;
    case K::LocalIp:
    case K::RemoteIp:
      return T::Address;
    case K::TargetSameSandbox:
      return T::Process;
    case K::RequireAll:
    case K::RequireAny:
    case K::RequireNot:
      break;
  }
  return std::nullopt;
}

std::variant<SbplRule, SbplError> rule_of(const Form& e, std::vector<SbplFilter>& filters) {
  if (!(e.head_is("allow") || e.head_is("deny")))
    return e.error("expected an (allow ...) or (deny ...) rule");
  SbplRule r;
  r.allow = e.item(0).is_symbol("allow");
  r.line = e.node().line;
  uint32_t i = 1;
  Form item = e.item(1);
  for (; i < e.size() && item.kind() == Sexpr::Kind::Symbol; ++i, item = item.next()) {
    const uint64_t bit = operation_bit(item.atom());
    if (!bit) return e.error("unknown or unsupported operation '" + std::string(item.atom()) + "'");
    r.operations.emplace_back(item.atom());
    r.operation_bits |= bit;
  }
  if (r.operations.empty()) return e.error("a rule names at least one operation");
  r.first_filter = static_cast<uint32_t>(filters.size());
  r.end_filter = r.first_filter + (e.size() - i);
  filters.resize(r.end_filter);
  for (uint32_t at = r.first_filter; i < e.size(); ++i, ++at, item = item.next()) {
    if (auto err = filter_of(item, filters, at)) return *err;
  }
  // The rule's filters, nested ones included, take the range from its first on.
  for (size_t f = r.first_filter; f < filters.size(); ++f) {
    const auto tests = filter_target(filters[f].kind);
    if (!tests) continue;
    for (const auto& op : r.operations)
      if (sbpl_subset::operation_target(op) != *tests)
        return e.error("a filter on what '" + op + "' does not act on is outside the subset");
  }
  return r;
}

// --- Matching -------------------------------------------------------------------------

bool path_contains(std::string_view outer, std::string_view inner) {
  if (outer == "/") return inner.starts_with('/') || inner.starts_with("${");
  return inner == outer ||
         (inner.size() > outer.size() && inner.starts_with(outer) && inner[outer.size()] == '/');
}

bool ip_matches(std::string_view pattern, std::string_view target) {
  if (target.starts_with("unix:")) return false;
  auto pc = pattern.rfind(':'), tc = target.rfind(':');
  if (tc == std::string_view::npos) return false;
  auto phost = pattern.substr(0, pc), pport = pattern.substr(pc + 1);
  auto thost = target.substr(0, tc), tport = target.substr(tc + 1);
  return (phost == "*" || phost == thost) && (pport == "*" || pport == tport);
}

// What one indexed list's path filters say about a target: the best of them that matches
// (the highest specificity, then the earliest position; -1: none), with and without a
// subpath equal to the target, which creation under the strict subpath reading leaves out.
struct SetMatch {
  long specificity = -1, strict_specificity = -1;
  size_t pos = 0, strict_pos = 0;
  bool self = false;     // a subpath equal to the target is in the list
  bool touched = false;  // listed in set_matches()'s `touched`
};

struct Query {
  const SbplProfile& profile;
  std::string_view target;
  const std::vector<SetMatch>& sets;  // by list number; see set_matches()
  const SbplParams& params;
  // A subpath does not cover the target itself: the target is being created, under
  // SbplSubpathSelf::ExcludedOnCreate.
  bool exclude_self = false;
  // Set when a subpath equal to the target matched: only then can excluding it change a
  // match, so the strict reading need not be evaluated otherwise.
  mutable bool covered_self = false;
};

// The ids in SbplPathIds of the last target a query matched and of those of its
// ancestors that have one. A target shares with the one before it every ancestor inside
// their common prefix, so only the rest is looked up: the proof asks about every
// ancestor of a path, and a fresh walk for each would hash O(depth²) bytes per path.
struct Ancestors {
  struct Holder {
    size_t length = 0;
    uint32_t id = 0;
  };
  // The last target, in a copy of its own: the caller's bytes need not outlive the call.
  std::string target;
  int64_t target_id = -1;
  std::vector<Holder> ids;      // the ancestors with an id, shortest first
  std::optional<int64_t> root;  // the id of "/" (or -1), once looked up
  bool under_root = false;      // "/" holds the target
};

// Whether (subpath "/") holds `target`, which is not "/" itself: an absolute or symbolic
// path.
bool under_root(std::string_view target) {
  return target != "/" && (target.starts_with('/') || target.starts_with("${"));
}

// Looks up the ids of `target`, of its ancestors after the prefix it shares with the last
// target, and of "/" (once) into `memo`.
void find_holders(const SbplPathIds& index, std::string_view target, Ancestors& memo) {
  memo.target_id = -1;
  if (!target.empty()) {
    auto it = index.ids.find(target);
    if (it != index.ids.end()) memo.target_id = it->second;
  }
  const size_t common = common_prefix_length(target, memo.target);
  while (!memo.ids.empty() && memo.ids.back().length >= common) memo.ids.pop_back();
  for (size_t i = target.find('/', std::max<size_t>(common, 1)); i != std::string_view::npos;
       i = target.find('/', i + 1))
    if (auto it = index.ids.find(target.substr(0, i)); it != index.ids.end())
      memo.ids.push_back({i, it->second});
  memo.target.assign(target);
  memo.under_root = under_root(target);
  if (memo.under_root && !memo.root) {
    auto it = index.ids.find(std::string_view("/"));
    memo.root = it == index.ids.end() ? -1 : int64_t{it->second};
  }
}

// Every indexed list's SetMatch for `target`, from the occurrences of the target and its
// ancestors (found through `memo`, see find_holders): only the lists that name one of
// them are touched. Those are listed in `touched`, and only the last call's ones reset:
// the others match nothing by their indexed filters.
void set_matches(const SbplProfile& profile, std::string_view target, std::vector<SetMatch>& out,
                 std::vector<uint32_t>& touched, Ancestors& memo) {
  if (!profile.path_ids) {
    out.clear();
    return;
  }
  const SbplPathIds& index = *profile.path_ids;
  find_holders(index, target, memo);
  if (out.size() == index.sets.size()) {
    for (uint32_t set : touched) out[set] = {};
  } else {
    out.clear();
    out.resize(index.sets.size());
  }
  touched.clear();
  auto offer = [](long& best, size_t& best_pos, long specificity, size_t pos) {
    if (specificity > best || (specificity == best && pos < best_pos)) {
      best = specificity;
      best_pos = pos;
    }
  };
  auto offer_id = [&](uint32_t id, size_t size, bool is_target) {
    for (uint32_t n = index.first[id]; n < index.first[id + 1]; ++n) {
      const auto& o = index.occurrences[n];
      if (o.literal && !is_target) continue;
      SetMatch& m = out[o.set];
      if (!m.touched) {
        m.touched = true;
        touched.push_back(o.set);
      }
      const long specificity = static_cast<long>(size) * 2 + (o.literal ? 1 : 0);
      offer(m.specificity, m.pos, specificity, o.pos);
      if (!o.literal && is_target)
        m.self = true;
      else
        offer(m.strict_specificity, m.strict_pos, specificity, o.pos);
    }
  };
  if (memo.target_id >= 0) offer_id(static_cast<uint32_t>(memo.target_id), target.size(), true);
  for (const auto& h : memo.ids) offer_id(h.id, h.length, false);
  if (memo.under_root && *memo.root >= 0) offer_id(static_cast<uint32_t>(*memo.root), 1, false);
}

// A match, how specific it is (the length of the longest path filter that matched
// positively; a literal ranks above a subpath of the same length; -1 for none), and that
// filter, for the trace.
struct Match {
  bool matched = false;
  long specificity = -1;
  const SbplFilter* via = nullptr;
};

Match better(const Match& a, const Match& b) {
  if (!a.matched) return b;
  if (!b.matched) return a;
  return b.specificity > a.specificity ? b : a;
}

Match match(const SbplFilter& f, const Query& q);

bool is_path_filter(const SbplFilter& f) {
  return f.kind == SbplFilter::Kind::Literal || f.kind == SbplFilter::Kind::Subpath;
}

// A path filter whose value is known without a query, and which a lookup of the target's
// ancestors finds exactly when the filter matches (an empty value would match any
// absolute target, but is no ancestor of it).
std::optional<std::string_view> indexable_value(const SbplFilter& f) {
  if (!is_path_filter(f) || (f.is_param && !f.param_value)) return std::nullopt;
  const std::string_view v = f.param_value ? *f.param_value : std::string_view(f.value);
  if (v.empty()) return std::nullopt;
  return v;
}

// The filter a list position stands for: itself, or for a require-all list the filter
// under its (require-not ...).
const SbplFilter* path_filter_at(const std::vector<SbplFilter>& filters,
                                 std::span<const SbplFilter> list, size_t pos, bool negated) {
  const SbplFilter& f = list[pos];
  if (!negated) return &f;
  return f.kind == SbplFilter::Kind::RequireNot ? &filters[f.first_child] : nullptr;
}

// A path id not given yet.
constexpr uint32_t kNoId = UINT32_MAX;

// Numbers the list filters[first, end) in `index` and indexes its path filters. A filter
// whose `param_of` entry is set reads that parameter, and takes the id kept for it in
// `value_ids`, so that a parameter named many times is looked up once.
uint32_t index_paths(const std::vector<SbplFilter>& filters, uint32_t first, uint32_t end,
                     bool negated, std::span<const uint32_t> param_of,
                     std::span<uint32_t> value_ids, SbplPathIds& index) {
  const auto number = static_cast<uint32_t>(index.sets.size());
  const std::span<const SbplFilter> list(filters.data() + first, filters.data() + end);
  SbplPathSet& set = index.sets.emplace_back();
  set.first_other = static_cast<uint32_t>(index.others.size());
  for (size_t pos = 0; pos < list.size(); ++pos) {
    const SbplFilter* f = path_filter_at(filters, list, pos, negated);
    const auto v = f ? indexable_value(*f) : std::nullopt;
    if (!v) {
      index.others.push_back(static_cast<uint32_t>(pos));
      continue;
    }
    const uint32_t param = param_of[static_cast<size_t>(f - filters.data())];
    uint32_t* const kept = param == kNoId ? nullptr : &value_ids[param];
    uint32_t id = kept ? *kept : kNoId;
    if (id == kNoId) {
      // Hashed once, and a node made only for a value not seen yet.
      id = index.ids.try_emplace(*v, static_cast<uint32_t>(index.ids.size())).first->second;
      if (kept) *kept = id;
    }
    index.occurrences.push_back(
        {id, number, static_cast<uint32_t>(pos), f->kind == SbplFilter::Kind::Literal});
  }
  set.end_other = static_cast<uint32_t>(index.others.size());
  return number;
}

// The positions of list `set` that its index leaves to be evaluated one by one.
std::span<const uint32_t> others_of(const SbplPathIds& index, uint32_t set) {
  const SbplPathSet& s = index.sets[set];
  return {index.others.data() + s.first_other, index.others.data() + s.end_other};
}

// A match and the list position it came from: the linear reading of a list of
// alternatives keeps the highest specificity, and the earliest position on ties.
struct Ranked {
  Match m;
  size_t pos = 0;
  void offer(const Match& c, size_t at) {
    if (c.matched && (!m.matched || c.specificity > m.specificity ||
                      (c.specificity == m.specificity && at < pos))) {
      m = c;
      pos = at;
    }
  }
};

// The best match among the indexed filters of list `set`, as set_matches() found it.
Ranked lookup(uint32_t set, std::span<const SbplFilter> list, bool negated, const Query& q) {
  const SetMatch& m = q.sets[set];
  q.covered_self = q.covered_self || m.self;
  const long specificity = q.exclude_self ? m.strict_specificity : m.specificity;
  const size_t pos = q.exclude_self ? m.strict_pos : m.pos;
  if (specificity < 0) return {};
  return {{true, specificity, path_filter_at(q.profile.filters, list, pos, negated)}, pos};
}

// The best alternative of a list, through its index (list `set`) when it has one.
Match best_of(std::span<const SbplFilter> list, uint32_t set, const Query& q) {
  if (set == SbplPathIds::kNoSet) {
    Match best;
    for (const auto& c : list) best = better(best, match(c, q));
    return best;
  }
  Ranked best = lookup(set, list, false, q);
  for (size_t pos : others_of(*q.profile.path_ids, set)) best.offer(match(list[pos], q), pos);
  return best.m;
}

Match match(const SbplFilter& f, const Query& q) {
  using K = SbplFilter::Kind;
  switch (f.kind) {
    case K::Literal:
    case K::Subpath: {
      std::string_view path = f.value;
      if (f.param_value) {
        path = *f.param_value;
      } else if (f.is_param) {
        auto it = q.params.find(f.value);
        if (it == q.params.end()) return {};
        path = it->second;
      }
      bool hit;
      if (f.kind == K::Literal) {
        hit = q.target == path;
      } else {
        hit = path_contains(path, q.target);
        if (hit && q.target == path) {
          q.covered_self = true;
          hit = !q.exclude_self;
        }
      }
      if (!hit) return {};
      return {true, static_cast<long>(path.size()) * 2 + (f.kind == K::Literal ? 1 : 0), &f};
    }
    case K::RequireAll: {
      // A (require-not ...) child matches with no specificity, so the indexed ones only
      // decide whether the whole matches.
      const auto children = q.profile.children(f);
      const bool indexed = f.child_paths != SbplPathIds::kNoSet;
      if (indexed && lookup(f.child_paths, children, true, q).m.matched) return {};
      Match m{true, -1, nullptr};
      auto require = [&](const SbplFilter& c) {
        Match cm = match(c, q);
        if (cm.matched && cm.specificity > m.specificity) m = cm;
        return cm.matched;
      };
      if (indexed) {
        for (size_t pos : others_of(*q.profile.path_ids, f.child_paths))
          if (!require(children[pos])) return {};
      } else {
        for (const auto& c : children)
          if (!require(c)) return {};
      }
      return m;
    }
    case K::RequireAny:
      return best_of(q.profile.children(f), f.child_paths, q);
    case K::RequireNot:
      return {!match(q.profile.filters[f.first_child], q).matched, -1, nullptr};
    case K::TargetSameSandbox:
      return {q.target == "same-sandbox", -1, &f};
    case K::SysctlName:
    case K::GlobalName:
      return {q.target == f.value, -1, &f};
    case K::SysctlNamePrefix:
      return {q.target.starts_with(f.value), -1, &f};
    case K::LocalIp:
    case K::RemoteIp:
      return {ip_matches(f.value, q.target), -1, &f};
  }
  return {};
}

Match filters_match(const SbplRule& r, const Query& q) {
  if (r.first_filter == r.end_filter) return {true, -1, nullptr};
  return best_of(q.profile.filters_of(r), r.filter_paths, q);
}

std::string filter_text(const SbplFilter& f, const SbplParams& params) {
  using K = SbplFilter::Kind;
  switch (f.kind) {
    case K::Literal:
    case K::Subpath: {
      std::string head = f.kind == K::Literal ? "literal" : "subpath";
      const std::string value(f.value);
      if (!f.is_param) return "(" + head + " \"" + value + "\")";
      std::string out = "(" + head + " (param \"" + value + "\"))";
      if (f.param_value) return out + " = " + std::string(*f.param_value);
      auto it = params.find(f.value);
      return it == params.end() ? out : out + " = " + std::string(it->second);
    }
    case K::TargetSameSandbox:
      return "(target same-sandbox)";
    case K::SysctlName:
      return "(sysctl-name \"" + std::string(f.value) + "\")";
    case K::SysctlNamePrefix:
      return "(sysctl-name-prefix \"" + std::string(f.value) + "\")";
    case K::GlobalName:
      return "(global-name \"" + std::string(f.value) + "\")";
    case K::LocalIp:
      return "(local ip \"" + std::string(f.value) + "\")";
    case K::RemoteIp:
      return "(remote ip \"" + std::string(f.value) + "\")";
    case K::RequireAll:
    case K::RequireAny:
    case K::RequireNot:
      break;
  }
  return "";
}

// The rule that decides among the matching ones (`matched`, ascending) under each
// precedence reading, indexed by SbplPrecedence; -1 for the default. One pass serves
// every reading: a verifier asks all of them about every probe.
std::array<int, 4> chosen_rules(const SbplProfile& profile, const std::vector<Match>& matches,
                                const std::vector<int>& matched) {
  std::array<int, 4> chosen;
  chosen.fill(-1);
  if (matched.empty()) return chosen;
  int last = matched.front(), first = last, deny_wins = last, most_specific = last;
  for (size_t n = 1; n < matched.size(); ++n) {
    const int i = matched[n];
    const bool allow = profile.rules[i].allow;
    last = i;
    if (!allow && profile.rules[deny_wins].allow) deny_wins = i;
    if (matches[i].specificity > matches[most_specific].specificity ||
        (matches[i].specificity == matches[most_specific].specificity && !allow))
      most_specific = i;
  }
  chosen[static_cast<size_t>(SbplPrecedence::LastMatchWins)] = last;
  chosen[static_cast<size_t>(SbplPrecedence::DenyWins)] = deny_wins;
  chosen[static_cast<size_t>(SbplPrecedence::FirstMatchWins)] = first;
  chosen[static_cast<size_t>(SbplPrecedence::MostSpecificWins)] = most_specific;
  return chosen;
}

bool allowed_by(const SbplProfile& profile, int chosen) {
  return chosen < 0 ? profile.default_allow : profile.rules[chosen].allow;
}

// The positions of the matches that hold, ascending.
std::vector<int> matched_rules(const std::vector<Match>& matches) {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(matches.size()); ++i)
    if (matches[i].matched) out.push_back(i);
  return out;
}

// Picks the deciding rule among the matches (`matched`: those that hold, ascending), under
// one precedence reading.
SbplDecision choose(const SbplProfile& profile, const std::vector<Match>& matches,
                    const std::vector<int>& matched, SbplPrecedence precedence,
                    const SbplParams& params, bool with_trace) {
  const int chosen = chosen_rules(profile, matches, matched)[static_cast<size_t>(precedence)];
  SbplDecision d;
  if (chosen < 0) {
    d.allowed = profile.default_allow;
    if (with_trace)
      d.trace =
          std::string(d.allowed ? "allowed" : "denied") + " by the default rule (no rule matches)";
    return d;
  }
  const SbplRule& r = profile.rules[chosen];
  d.allowed = r.allow;
  d.rule = chosen;
  if (!with_trace) return d;
  std::string head = r.allow ? "(allow" : "(deny";
  for (const auto& op : r.operations) head += " " + op;
  head += r.first_filter == r.end_filter ? ")" : " ...)";
  d.trace = std::string(r.allow ? "allowed" : "denied") + " by rule " + std::to_string(chosen) +
            " (profile.sb line " + std::to_string(r.line) + ") " + head;
  if (matches[chosen].via) d.trace += " via " + filter_text(*matches[chosen].via, params);
  return d;
}

// Which rules match `q`, among those naming one of the `operations` (covering() bits).
// `q.sets` comes from set_matches() with its `touched` list: a rule with filters, all
// indexed in a list the target does not touch, matches nothing and is not evaluated.
std::vector<Match> all_matches(const SbplProfile& profile, const Query& q, uint64_t operations) {
  std::vector<Match> out;
  out.reserve(profile.rules.size());
  for (const auto& r : profile.rules) {
    const bool untouched = r.first_filter != r.end_filter &&
                           r.filter_paths != SbplPathIds::kNoSet &&
                           !q.sets[r.filter_paths].touched &&
                           others_of(*profile.path_ids, r.filter_paths).empty();
    out.push_back(r.operation_bits & operations && !untouched ? filters_match(r, q) : Match{});
  }
  return out;
}

// Binds the filters of a profile to their parameters and indexes their lists.
struct Binder {
  std::vector<SbplFilter>& filters;
  const SbplParams& params;
  // By parameter, in `params` order: the path id of its value once a list names it.
  std::vector<uint32_t> value_ids;
  // By filter: the position in `params` of the parameter it reads, if bound; else kNoId.
  std::vector<uint32_t> param_of;
  SbplPathIds& ids;

  // Binds every filter that reads a parameter, in one pass over the array.
  void bind() {
    for (size_t i = 0; i < filters.size(); ++i) {
      SbplFilter& f = filters[i];
      if (!f.is_param) continue;
      if (auto it = params.find(f.value); it != params.end()) {
        f.param_value = &it->second;
        param_of[i] = static_cast<uint32_t>(it - params.begin());
      }
    }
  }
  // Numbers the lists under filters[at], and its own, children first. Only lists are
  // visited: most filters are paths.
  void index_lists(uint32_t at) {
    SbplFilter& f = filters[at];
    for (uint32_t c = f.first_child; c < f.end_child; ++c)
      if (filters[c].first_child != filters[c].end_child) index_lists(c);
    if (f.kind == SbplFilter::Kind::RequireAll || f.kind == SbplFilter::Kind::RequireAny)
      f.child_paths = index(f.first_child, f.end_child, f.kind == SbplFilter::Kind::RequireAll);
  }
  uint32_t index(uint32_t first, uint32_t end, bool negated) {
    return index_paths(filters, first, end, negated, param_of, value_ids, ids);
  }
};

std::vector<std::string> collect_params(const SbplProfile& profile, bool unbound_only) {
  std::set<std::string_view> names;
  for (const auto& f : profile.filters)
    if (f.is_param && !(unbound_only && f.param_value)) names.insert(f.value);
  return {names.begin(), names.end()};
}

const char* precedence_name(SbplPrecedence p) {
  switch (p) {
    case SbplPrecedence::LastMatchWins:
      return "last-match";
    case SbplPrecedence::DenyWins:
      return "deny-wins";
    case SbplPrecedence::FirstMatchWins:
      return "first-match";
    case SbplPrecedence::MostSpecificWins:
      return "most-specific";
  }
  return "last-match";
}

}  // namespace

std::string SbplError::str() const {
  return "profile.sb:" + std::to_string(line) + ":" + std::to_string(col) + ": " + message;
}

std::variant<std::vector<Sexpr>, SbplError> parse_sexprs(std::string_view text) {
  auto read = Reader(text).all();
  if (auto* err = std::get_if<SbplError>(&read)) return *err;
  const Nodes& nodes = std::get<Nodes>(read);
  std::vector<Sexpr> out;
  for (uint32_t i = 0; i < nodes.size(); i = nodes[i].end) out.push_back(to_sexpr(nodes, i));
  return out;
}

std::string print_sexpr(const Sexpr& e) {
  std::string out;
  print_to(e, out);
  return out;
}

std::variant<SbplProfile, SbplError> parse_sbpl(std::string_view text) {
  auto read = Reader(text).all();
  if (auto* err = std::get_if<SbplError>(&read)) return *err;
  const Nodes& nodes = std::get<Nodes>(read);
  if (nodes.empty()) return SbplError{1, 1, "empty profile"};
  const Form v(nodes, 0);
  if (!(v.head_is("version") && v.size() == 2 && v.item(1).kind() == Sexpr::Kind::Integer &&
        v.item(1).atom() == "1"))
    return v.error("the profile must start with (version 1)");
  if (v.node().end == nodes.size())
    return SbplError{v.node().line, v.node().col, "no (deny default) after (version 1)"};
  const Form d = v.next();
  SbplProfile p;
  if ((d.head_is("deny") || d.head_is("allow")) && d.size() == 2 &&
      d.item(1).is_symbol("default")) {
    p.default_allow = d.item(0).is_symbol("allow");
  } else {
    return d.error("the second form must be (deny default) or (allow default)");
  }
  for (uint32_t i = d.node().end; i < nodes.size(); i = nodes[i].end) {
    const Form e(nodes, i);
    if (e.head_is("version")) return e.error("a second (version ...)");
    if (e.size() == 2 && e.item(1).is_symbol("default")) return e.error("a second default rule");
    auto r = rule_of(e, p.filters);
    if (auto* err = std::get_if<SbplError>(&r)) return *err;
    p.rules.push_back(std::move(std::get<SbplRule>(r)));
  }
  return p;
}

std::vector<std::string> referenced_params(const SbplProfile& profile) {
  return collect_params(profile, false);
}

std::vector<std::string> unbound_params(const SbplProfile& bound) {
  return collect_params(bound, true);
}

SbplProfile bind_params(SbplProfile profile, const SbplParams& params) {
  auto ids = std::make_shared<SbplPathIds>();
  Binder binder{profile.filters, params, std::vector<uint32_t>(params.size(), kNoId),
                std::vector<uint32_t>(profile.filters.size(), kNoId), *ids};
  binder.bind();
  for (auto& r : profile.rules) {
    for (uint32_t f = r.first_filter; f < r.end_filter; ++f)
      if (profile.filters[f].first_child != profile.filters[f].end_child) binder.index_lists(f);
    r.filter_paths = binder.index(r.first_filter, r.end_filter, false);
  }
  // Grouped by id, each group in the order found: a counting sort, as the group bounds
  // are counted anyway.
  ids->first.assign(ids->ids.size() + 1, 0);
  for (const auto& o : ids->occurrences) ++ids->first[o.id + 1];
  for (size_t i = 1; i < ids->first.size(); ++i) ids->first[i] += ids->first[i - 1];
  std::vector<SbplPathIds::Occurrence> grouped(ids->occurrences.size());
  std::vector<uint32_t> next(ids->first.begin(), ids->first.end() - 1);
  for (const auto& o : ids->occurrences) grouped[next[o.id]++] = o;
  ids->occurrences = std::move(grouped);
  profile.path_ids = std::move(ids);
  return profile;
}

std::string SbplModel::str() const {
  return std::string(precedence_name(precedence)) + (subpath_self == SbplSubpathSelf::Included
                                                         ? "/subpath-includes-self"
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
  std::vector<SetMatch> sets;
  std::vector<uint32_t> touched;
  Ancestors ancestors;
  set_matches(profile, target, sets, touched, ancestors);
  const Query q{
      profile, target, sets, params,
      operation == "file-write-create" && model.subpath_self == SbplSubpathSelf::ExcludedOnCreate};
  const auto matches = all_matches(profile, q, covering(operation));
  return choose(profile, matches, matched_rules(matches), model.precedence, params, true);
}

std::vector<SbplDecision> decide_all_models(const SbplProfile& profile, std::string_view operation,
                                            std::string_view target, const SbplParams& params,
                                            bool with_trace) {
  const uint64_t operations = covering(operation);
  std::vector<SetMatch> sets;
  std::vector<uint32_t> touched;
  Ancestors ancestors;
  set_matches(profile, target, sets, touched, ancestors);
  const Query q{profile, target, sets, params};
  const auto included = all_matches(profile, q, operations);
  // Which rules match depends on the subpath reading only, and only for creation.
  std::vector<Match> excluded;
  if (operation == "file-write-create" && q.covered_self)
    excluded = all_matches(profile, {profile, target, sets, params, true}, operations);
  // Listed once: the eight models choose among the same matches.
  const auto included_matched = matched_rules(included), excluded_matched = matched_rules(excluded);
  std::vector<SbplDecision> out;
  for (const auto& m : all_sbpl_models()) {
    const bool strict = m.subpath_self == SbplSubpathSelf::ExcludedOnCreate && !excluded.empty();
    out.push_back(choose(profile, strict ? excluded : included,
                         strict ? excluded_matched : included_matched, m.precedence, params,
                         with_trace));
  }
  return out;
}

namespace {

// Whether `f`, met among a list's `others`, matches by what the indexed lists under it
// say alone, and not by the target itself; if so, those lists are added to `sets`.
bool decided_by_lists(const SbplProfile& profile, const SbplFilter& f,
                      std::vector<uint32_t>& sets) {
  switch (f.kind) {
    case SbplFilter::Kind::RequireAll:
    case SbplFilter::Kind::RequireAny: {
      if (f.child_paths == SbplPathIds::kNoSet) return false;
      sets.push_back(f.child_paths);
      const auto others = others_of(*profile.path_ids, f.child_paths);
      return std::all_of(others.begin(), others.end(), [&](size_t pos) {
        return decided_by_lists(profile, profile.filters[f.first_child + pos], sets);
      });
    }
    case SbplFilter::Kind::RequireNot:
      return decided_by_lists(profile, profile.filters[f.first_child], sets);
    default:
      return false;
  }
}

}  // namespace

struct SbplTargetQuery::Settled {
  int rule = 0;
  std::vector<uint32_t> sets;  // the indexed lists its match follows from
  Match untouched;             // its match while the target touches none of them
};

struct SbplTargetQuery::Scratch {
  std::vector<SetMatch> sets;
  std::vector<uint32_t> touched;
  Ancestors ancestors;
  std::vector<Match> included, excluded;
  std::vector<int> included_hits, excluded_hits, matched;
  std::vector<uint32_t> allowed;
};

SbplTargetQuery::SbplTargetQuery(const SbplProfile& profile, const SbplParams& params,
                                 const std::vector<std::string>& operations)
    : profile_(profile), params_(params), scratch_(std::make_unique<Scratch>()) {
  for (const auto& op : operations) {
    operations_.push_back({covering(op), op == "file-write-create"});
    any_ |= operations_.back().covering;
  }
  for (int i = 0; i < static_cast<int>(profile.rules.size()); ++i)
    if (profile.rules[i].operation_bits & any_) candidates_.push_back(i);
  by_set_.resize(profile.path_ids ? profile.path_ids->sets.size() : 0);
  for (int i : candidates_) {
    const SbplRule& r = profile.rules[i];
    const bool unconditional = r.first_filter == r.end_filter;
    const bool indexed = r.filter_paths != SbplPathIds::kNoSet;
    const auto others =
        indexed ? others_of(*profile.path_ids, r.filter_paths) : std::span<const uint32_t>();
    if (!unconditional && indexed && others.empty()) {
      by_set_[r.filter_paths].push_back(i);
      continue;
    }
    Settled settled{i, {}, {}};
    if (unconditional || !indexed || !std::all_of(others.begin(), others.end(), [&](size_t pos) {
          return decided_by_lists(profile, profile.filters[r.first_filter + pos], settled.sets);
        })) {
      always_.push_back(i);
      continue;
    }
    settled.sets.push_back(r.filter_paths);
    settled_.push_back(std::move(settled));
  }
  // No list matches a target that none names, under either subpath reading.
  const std::vector<SetMatch> untouched(by_set_.size());
  for (auto& s : settled_)
    s.untouched =
        filters_match(profile.rules[s.rule], {profile, std::string_view(), untouched, params});
  scratch_->included.resize(profile.rules.size());
  scratch_->excluded.resize(profile.rules.size());
  const auto& models = all_sbpl_models();
  for (size_t m = 0; m < models.size(); ++m)
    models_[models[m].subpath_self == SbplSubpathSelf::ExcludedOnCreate]
           [static_cast<size_t>(models[m].precedence)] |= uint32_t{1} << m;
}

SbplTargetQuery::~SbplTargetQuery() = default;

std::vector<int> SbplTargetQuery::rules_matched_per_target() const {
  std::vector<int> out = always_;
  for (const auto& s : settled_) out.push_back(s.rule);
  std::sort(out.begin(), out.end());
  return out;
}

std::span<const uint32_t> SbplTargetQuery::allowed(std::string_view target) {
  auto& [sets, touched, ancestors, included, excluded, included_hits, excluded_hits, matched, out] =
      *scratch_;
  set_matches(profile_, target, sets, touched, ancestors);
  // Only the rules naming one of the operations, and of those only the ones the target's
  // lists can match, are matched; `matches` is read only where `hits`, the matching
  // ones, ascending, says.
  auto match_rules = [&](const Query& q, std::vector<Match>& matches, std::vector<int>& hits) {
    hits.clear();
    auto match_rule = [&](int i) {
      matches[i] = filters_match(profile_.rules[i], q);
      if (matches[i].matched) hits.push_back(i);
    };
    for (int i : always_) match_rule(i);
    for (const auto& s : settled_) {
      if (std::any_of(s.sets.begin(), s.sets.end(),
                      [&](uint32_t set) { return sets[set].touched; }))
        match_rule(s.rule);
      else if ((matches[s.rule] = s.untouched).matched)
        hits.push_back(s.rule);
    }
    for (uint32_t set : touched)
      for (int i : by_set_[set]) match_rule(i);
    std::sort(hits.begin(), hits.end());
  };
  const Query q{profile_, target, sets, params_};
  match_rules(q, included, included_hits);
  const bool strict_differs = q.covered_self;
  if (strict_differs) match_rules({profile_, target, sets, params_, true}, excluded, excluded_hits);
  // Few rules match a target; each operation keeps those of them that name it.
  out.assign(operations_.size(), 0);
  for (size_t k = 0; k < operations_.size(); ++k) {
    const bool apart = operations_[k].create && strict_differs;  // the subpath readings differ
    for (const bool strict : {false, true}) {
      if (strict && !apart) break;
      const auto& matches = strict ? excluded : included;
      matched.clear();
      for (int i : strict ? excluded_hits : included_hits)
        if (profile_.rules[i].operation_bits & operations_[k].covering) matched.push_back(i);
      const auto chosen = chosen_rules(profile_, matches, matched);
      for (size_t p = 0; p < chosen.size(); ++p) {
        if (!allowed_by(profile_, chosen[p])) continue;
        out[k] |= strict ? models_[1][p] : apart ? models_[0][p] : models_[0][p] | models_[1][p];
      }
    }
  }
  return out;
}

}  // namespace zpolicy::compiler
