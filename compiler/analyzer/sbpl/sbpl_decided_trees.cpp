#include "compiler/analyzer/sbpl/sbpl_decided_trees.hpp"

#include <algorithm>

#include "compiler/analyzer/path_text.hpp"

namespace zpolicy::compiler {
namespace {

// What a filter is at every path of the tree (Kleene's three values): surely true, surely
// false, or either, depending on the path and on where the roots lie.
enum class Truth { False, True, Either };

Truth negation(Truth t) {
  return t == Truth::Either ? t : t == Truth::True ? Truth::False : Truth::True;
}

// Which paths of the tree a reading is about. A concrete filter on `top` itself tells
// `top` from the paths below it, and the strict subpath reading tells creating `top` from
// the other operations on it, so the tree is read three times.
enum class Where {
  AtTop,               // `top` itself, any operation but creating it under the strict reading
  AtTopStrictCreate,   // creating `top` under the strict reading (subpath excludes itself)
  BelowTop,            // every path strictly below `top`, any operation and reading
};

// A literal or subpath filter's value at the paths `where` says: a concrete path above
// `top` is a subpath true on the whole tree and a literal false on it; one beside it is
// false there; one below it is false at `top` and either below. A symbolic value is
// either: the roots it starts with may lie anywhere at or below `top` (or apart).
Truth leaf(const SbplFilter& f, std::string_view top, Where where) {
  if (f.is_param && !f.param_value) return Truth::False;  // an undefined parameter: nothing
  const std::string_view v = f.param_value ? *f.param_value : f.value;
  if (!v.starts_with('/')) return Truth::Either;
  const bool literal = f.kind == SbplFilter::Kind::Literal;
  if (v == top && where != Where::BelowTop)
    return literal || where == Where::AtTop ? Truth::True : Truth::False;
  if (within(v, top)) return literal ? Truth::False : Truth::True;  // above (or `top`, seen below)
  if (within(top, v)) return where == Where::BelowTop ? Truth::Either : Truth::False;
  return Truth::False;  // beside
}

// Each filter's value at the paths `where` says. Children come after their list in the
// array, so one backwards walk sees them first.
std::vector<Truth> filter_truths(const SbplProfile& p, std::string_view top, Where where) {
  std::vector<Truth> t(p.filters.size(), Truth::Either);
  for (size_t i = p.filters.size(); i-- > 0;) {
    const SbplFilter& f = p.filters[i];
    const auto first = t.begin() + f.first_child, end = t.begin() + f.end_child;
    auto any = [&](Truth v) { return std::find(first, end, v) != end; };
    switch (f.kind) {
      case SbplFilter::Kind::Literal:
      case SbplFilter::Kind::Subpath:
        t[i] = leaf(f, top, where);
        break;
      case SbplFilter::Kind::RequireAll:
        t[i] = any(Truth::False) ? Truth::False : any(Truth::Either) ? Truth::Either : Truth::True;
        break;
      case SbplFilter::Kind::RequireAny:
        t[i] = any(Truth::True) ? Truth::True : any(Truth::Either) ? Truth::Either : Truth::False;
        break;
      case SbplFilter::Kind::RequireNot:
        t[i] = f.end_child == f.first_child + 1 ? negation(*first) : Truth::Either;
        break;
      default:  // not a path filter: path operations never meet one; either, to be safe
        break;
    }
  }
  return t;
}

// Each rule's value: its filters are alternatives; none, it applies everywhere.
std::vector<Truth> rule_truths(const SbplProfile& p, std::string_view top, Where where) {
  const std::vector<Truth> t = filter_truths(p, top, where);
  std::vector<Truth> out;
  for (const SbplRule& r : p.rules) {
    Truth v = r.first_filter == r.end_filter ? Truth::True : Truth::False;
    for (uint32_t i = r.first_filter; i < r.end_filter; ++i)
      if (t[i] == Truth::True || (t[i] == Truth::Either && v == Truth::False)) v = t[i];
    out.push_back(v);
  }
  return out;
}

}  // namespace

std::vector<std::optional<bool>> tree_answers(const SbplProfile& bound, std::string_view top,
                                              const std::vector<std::string_view>& operations) {
  if (bound.default_allow) return std::vector<std::optional<bool>>(operations.size());
  const std::vector<Truth> at = rule_truths(bound, top, Where::AtTop);
  const std::vector<Truth> at_create = rule_truths(bound, top, Where::AtTopStrictCreate);
  const std::vector<Truth> below = rule_truths(bound, top, Where::BelowTop);
  std::vector<std::optional<bool>> out;
  for (std::string_view op : operations) {
    // Every precedence model picks one of the matching rules that cover the operation, or
    // the default (deny): so when none that can match allows, the answer is deny; when
    // all that can match allow and one surely matches, it is allow.
    auto answer = [&](const std::vector<Truth>& truths) -> std::optional<bool> {
      bool allow = false, deny = false, sure_allow = false;
      for (size_t r = 0; r < bound.rules.size(); ++r) {
        if (truths[r] == Truth::False || !sbpl_rule_covers(bound.rules[r], op)) continue;
        (bound.rules[r].allow ? allow : deny) = true;
        sure_allow = sure_allow || (bound.rules[r].allow && truths[r] == Truth::True);
      }
      if (!allow) return false;
      if (!deny && sure_allow) return true;
      return std::nullopt;
    };
    std::optional<bool> a = answer(at), b = answer(below);
    if (a && b && *a == *b && op == "file-write-create") {
      const std::optional<bool> c = answer(at_create);
      if (!c || *c != *a) a.reset();
    }
    out.push_back(a && b && *a == *b ? a : std::nullopt);
  }
  return out;
}

}  // namespace zpolicy::compiler
