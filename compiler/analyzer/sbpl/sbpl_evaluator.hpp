#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

// An evaluator for the Seatbelt profiles zpolicy emits. It shares nothing with
// emitters/sbpl but the language: it reads the profile text as an untrusted artifact,
// accepts only the subset of SBPL zpolicy writes, and answers (operation, target)
// queries under each plausible reading of Seatbelt's rule precedence.
namespace zpolicy::compiler {

// --- S-expressions --------------------------------------------------------------------

struct Sexpr {
  enum class Kind { List, Symbol, String, Integer };
  Kind kind = Kind::List;
  std::string atom;          // Symbol, String (unquoted) or Integer text
  std::vector<Sexpr> items;  // List
  int line = 0;              // 1-based line of the first character in the text
  int col = 0;
};

struct SbplError {
  int line = 0;
  int col = 0;
  std::string message;
  std::string str() const;  // "profile.sb:LINE:COL: MESSAGE"
};

// The top-level forms of `text`. Comments (`;` to end of line) are dropped. Strings may
// not contain a backslash or a newline, and `#"regex"` literals are refused: zpolicy never
// writes them, so their presence means the text is not one of ours.
std::variant<std::vector<Sexpr>, SbplError> parse_sexprs(std::string_view text);

// One-line canonical text of a form, re-parsable by parse_sexprs.
std::string print_sexpr(const Sexpr& e);

// --- Profiles -------------------------------------------------------------------------

// One filter list of a bound profile, of which the literal and subpath filters are found
// through SbplPathIds: a query looks up its target and the target's ancestors instead of
// comparing with every filter, since profiles list hundreds of them (a parameter per
// writable root and protected path). Built by bind_params.
struct SbplPathSet {
  // The positions in the list evaluated one by one: SbplPathIds::others[first, end).
  uint32_t first_other = 0, end_other = 0;
};

// Every value of a bound profile's indexed path filters, numbered, with the lists that
// hold it: a query looks up the target and each of its ancestors once for the whole
// profile, and touches only the lists that name one of them.
struct SbplPathIds {
  // A filter with the value: in list `set` at position `pos`; for a require-all list,
  // the filter under the (require-not ...) there.
  // filter, and bind_params() makes them twice.
  struct Occurrence {
    uint32_t id = 0;  // the value's number
    uint32_t set = 0;
    uint32_t pos = 0;
    bool literal = false;  // a literal, else a subpath
  };
  // A list number (SbplFilter::child_paths, SbplRule::filter_paths) of no list.
  static constexpr uint32_t kNoSet = UINT32_MAX;
  // The values view the profile text and the parameters, which outlive the bound profile.
  std::unordered_map<std::string_view, uint32_t> ids;
  // By id, in one array: those of value i run from first[i] to first[i + 1].
  std::vector<Occurrence> occurrences;
  std::vector<uint32_t> first;
  std::vector<SbplPathSet> sets;  // by list number
  std::vector<uint32_t> others;   // the SbplPathSet positions, list after list
};

// A filter of the emitted subset. Several filters on one rule are alternatives. The
// filters of a profile live in one array, SbplProfile::filters, where a filter's children
// are a range.
struct SbplFilter {
  enum class Kind : uint8_t {
    Literal,            // (literal PATH)
    Subpath,            // (subpath PATH)
    RequireAll,         // (require-all F...)
    RequireAny,         // (require-any F...)
    RequireNot,         // (require-not F)
    TargetSameSandbox,  // (target same-sandbox)
    SysctlName,         // (sysctl-name "NAME")
    SysctlNamePrefix,   // (sysctl-name-prefix "PREFIX")
    GlobalName,         // (global-name "SERVICE")
    LocalIp,            // (local ip "localhost:*")
    RemoteIp,           // (remote ip "localhost:*")
  };
  std::string_view value;  // constant string argument, in the text parse_sbpl read
  const std::string_view* param_value = nullptr;  // set by bind_params: the value in its params
  // RequireAll/RequireAny/RequireNot: SbplProfile::filters[first_child, end_child); see
  // SbplProfile::children().
  uint32_t first_child = 0, end_child = 0;
  // RequireAll/RequireAny: the children's list in SbplPathIds::sets, by bind_params.
  uint32_t child_paths = SbplPathIds::kNoSet;
  Kind kind = Kind::Literal;
  bool is_param = false;  // Literal/Subpath: `value` names a (param "...")
};

struct SbplRule {
  bool allow = false;
  std::vector<std::string> operations;  // as written: "file-write*", "process-exec", ...
  uint64_t operation_bits = 0;          // the same, as bits over the subset's operations
  // SbplProfile::filters[first_filter, end_filter), see SbplProfile::filters_of(); none:
  // the rule applies unconditionally.
  uint32_t first_filter = 0, end_filter = 0;
  uint32_t filter_paths = SbplPathIds::kNoSet;  // the filters' list, by bind_params
  int line = 0;                                 // where the rule starts in the profile text
};

struct SbplProfile {
  bool default_allow = false;  // (allow default) / (deny default)
  std::vector<SbplRule> rules;
  std::vector<SbplFilter> filters;              // of every rule, each list in a range of its own
  std::shared_ptr<const SbplPathIds> path_ids;  // set by bind_params

  // A rule's filters, alternatives to one another; empty when it applies unconditionally.
  std::span<const SbplFilter> filters_of(const SbplRule& r) const {
    return {filters.data() + r.first_filter, filters.data() + r.end_filter};
  }
  // The filters under a (require-all ...), (require-any ...) or (require-not ...); empty
  // for the others. Valid while the profile's filters are not added to.
  std::span<const SbplFilter> children(const SbplFilter& f) const {
    return {filters.data() + f.first_child, filters.data() + f.end_child};
  }
};

// Parses the text zpolicy emits; anything outside the subset is an error naming the
// form: `(version 1)` first, then exactly one `(allow|deny default)`, then rules whose
// operations and filters are listed above. The profile's filter values view `text`, which
// must outlive it: copying each value allocated once per filter path.
std::variant<SbplProfile, SbplError> parse_sbpl(std::string_view text);

// The names a profile reads with (param "..."), sorted and unique.
std::vector<std::string> referenced_params(const SbplProfile& profile);

// The names a profile reads that bind_params found no value for, sorted and unique: on a
// bound profile, cheaper than looking every referenced_params() name up again.
std::vector<std::string> unbound_params(const SbplProfile& bound);

// --- Decisions ------------------------------------------------------------------------

// Seatbelt's precedence between overlapping rules is not documented. zpolicy accepts a
// profile only if every reading below gives the same answer wherever the answer matters.
enum class SbplPrecedence {
  LastMatchWins,     // the last matching rule decides (the common description)
  DenyWins,          // any matching deny beats any matching allow
  FirstMatchWins,    // the first matching rule decides
  MostSpecificWins,  // the rule whose matching path filter is longest decides; ties: deny
};

// Whether (subpath P) covers P itself when P is being created. Profiles in the wild pair
// every subpath with a literal because creating a missing P was observed to slip past a
// bare subpath; the strict reading models exactly that gap.
enum class SbplSubpathSelf { Included, ExcludedOnCreate };

struct SbplModel {
  SbplPrecedence precedence = SbplPrecedence::LastMatchWins;
  SbplSubpathSelf subpath_self = SbplSubpathSelf::Included;
  std::string str() const;  // "last-match/subpath-includes-self"
};

// Every combination, in a fixed order.
const std::vector<SbplModel>& all_sbpl_models();

// The parameters' values by name, viewed: the strings they view (the params.txt pairs,
// say) must outlive the table and what is bound with it. In the order given.
class SbplParams {
 public:
  using value_type = std::pair<std::string_view, std::string_view>;
  using const_iterator = const value_type*;

  SbplParams() = default;
  SbplParams(std::initializer_list<value_type> pairs) : SbplParams(pairs.begin(), pairs.end()) {}
  // Pairs whose members convert to string_view; of a name given twice, the first value.
  template <class It>
  SbplParams(It first, It last) {
    for (; first != last; ++first) insert(first->first, first->second);
  }

  void reserve(size_t n) {
    pairs_.reserve(n);
    index_.reserve(n);
  }
  // False, keeping the first value, when `name` is defined already. May move the pairs,
  // and so must not be called while a profile bound with the table lives.
  bool insert(std::string_view name, std::string_view value) {
    if (!index_.try_emplace(name, pairs_.size()).second) return false;
    pairs_.emplace_back(name, value);
    return true;
  }
  // The pair of `name`, or end().
  const_iterator find(std::string_view name) const {
    auto it = index_.find(name);
    return it == index_.end() ? end() : begin() + it->second;
  }

  const_iterator begin() const { return pairs_.data(); }
  const_iterator end() const { return pairs_.data() + pairs_.size(); }
  size_t size() const { return pairs_.size(); }

 private:
  std::vector<value_type> pairs_;
  std::unordered_map<std::string_view, size_t> index_;  // position in pairs_
};

// `profile` with each (param "NAME") looked up once, and the path filters of each list
// indexed (SbplPathSet), so that many decisions on the same parameters do not search
// `params` or scan long lists again. Undefined names stay unbound. Taken by value: a
// caller done with the unbound profile moves it in rather than copying every filter.
// The result points into `params` and the strings it views, which must outlive it
// (decisions take `params` again), and into its array of pairs: a parameter inserted
// after binding may move that array, so `params` must not change while the result lives.
SbplProfile bind_params(SbplProfile profile, const SbplParams& params);

struct SbplDecision {
  bool allowed = false;
  int rule = -1;  // index into SbplProfile::rules, -1 for the default
  // "allowed by rule 15 (profile.sb line 70) (allow file-write* ...) via
  //  (subpath (param "WRITABLE_ROOT_0")) = ${WORKSPACE}"
  std::string trace;
};

// `operation` is a concrete operation (no '*'). `target` is a path for file operations
// (absolute, or symbolic like "${WORKSPACE}/.git"), "HOST:PORT" or "unix:PATH" for
// network operations, the executable for process-exec, and "same-sandbox" or any other
// word for signal and process-info. An undefined parameter matches nothing; callers
// check unbound_params (or referenced_params) first.
SbplDecision decide(const SbplProfile& profile, std::string_view operation, std::string_view target,
                    const SbplParams& params, const SbplModel& model);

// decide() under every model, in all_sbpl_models() order, sharing the rule matching.
// Without `with_trace` the traces stay empty: a verifier asks many questions and
// explains only the answers that are wrong.
std::vector<SbplDecision> decide_all_models(const SbplProfile& profile, std::string_view operation,
                                            std::string_view target, const SbplParams& params,
                                            bool with_trace = true);

// decide_all_models() without traces for a fixed list of operations on one target at a
// time: which rules' filters match depends on the operation only through whether the
// rules name it (and creation's subpath reading), so the target is matched once for all
// the operations. For a verifier asking about many targets; `profile` is bound, and it
// and `params` must outlive the query.
class SbplTargetQuery {
 public:
  SbplTargetQuery(const SbplProfile& profile, const SbplParams& params,
                  const std::vector<std::string>& operations);
  ~SbplTargetQuery();
  // Element k: bit m set when all_sbpl_models()[m] allows operations[k] on `target`.
  // Valid until the next call. Consecutive targets that share a prefix share the look-ups
  // of their common ancestors.
  std::span<const uint32_t> allowed(std::string_view target);
  // The rules that the index does not place (unconditional ones, and those with a filter
  // the index cannot decide), ascending: every target is matched against each of them,
  // so a verifier bounds how many there may be.
  std::vector<int> rules_matched_per_target() const;

 private:
  struct Scratch;
  const SbplProfile& profile_;
  const SbplParams& params_;
  struct Operation {
    uint64_t covering = 0;  // the profile operations that cover it
    bool create = false;    // file-write-create
  };
  std::vector<Operation> operations_;
  uint64_t any_ = 0;             // every profile operation that covers one of them
  std::vector<int> candidates_;  // the rules naming one of them, ascending
  // The candidates whose filters are all indexed, by their list's number:
  // they can match only a target that the list names, or an ancestor of it. The others,
  // ascending, are matched against every target.
  std::vector<std::vector<int>> by_set_;
  std::vector<int> always_;
  // Those of the others whose match follows from their indexed lists alone: while the
  // target touches none of those lists, they match as they match a target no list names,
  // which is worked out once.
  struct Settled;
  std::vector<Settled> settled_;
  // The all_sbpl_models() bits of each subpath reading (included, excluded on create)
  // and precedence.
  std::array<std::array<uint32_t, 4>, 2> models_{};
  // Per-target working space, kept to spare allocating it for each of thousands.
  std::unique_ptr<Scratch> scratch_;
};

}  // namespace zpolicy::compiler
