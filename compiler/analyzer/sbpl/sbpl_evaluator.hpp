#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/result.hpp"

// An evaluator for the Seatbelt profiles zpolicy emits. It shares nothing with
// emitters/sbpl but the language: it reads the profile text as an untrusted artifact,
// accepts only the subset of SBPL zpolicy writes, and answers (operation, target)
// queries under each plausible reading of Seatbelt's rule precedence.
namespace zpolicy::compiler {

// --- S-expressions --------------------------------------------------------------------

struct Sexpr {
  enum class Kind { List, Symbol, String, Integer };
  Kind kind = Kind::List;
  // Symbol, String (unquoted) or Integer text: a view of the text parse_sexprs read (of
  // strings that outlive the form, for forms made otherwise).
  std::string_view atom;
  std::vector<Sexpr> items;  // List
  int line = 0;              // 1-based line of the first character in the text
  int col = 0;
};

// The top-level forms of `text`, which they view: the one reading of a profile's text,
// or the error at profile.sb:LINE:COL. Comments (`;` to end of line) are dropped.
// Strings may not contain a backslash or a newline, and `#"regex"` literals are refused:
// zpolicy never writes them, so their presence means the text is not one of ours. Lists nest at most 16 deep, which bounds every walk over the
// forms (reading filters, printing, matching).
ir::Result<std::vector<Sexpr>> parse_sexprs(std::string_view text);

// One-line canonical text of a form, re-parsable by parse_sexprs.
std::string print_sexpr(const Sexpr& e);

// --- Profiles -------------------------------------------------------------------------

// The longest path the macOS kernel names in a check (MAXPATHLEN, counting the NUL as
// one of its 1024 bytes): a filter on a longer one can never apply.
inline constexpr size_t kSbplMaxPathBytes = 1023;

// Seatbelt compares paths as strings after resolving them, so a path must already be in
// the one spelling the kernel reports: absolute (or a symbolic variable), no empty, "."
// or ".." component, no trailing slash. A filter on another spelling ("/Users/") would
// match what the evaluator cannot predict.
bool sbpl_normalized_path(std::string_view path);

// A filter of the emitted subset. Several filters on one rule are alternatives. The
// filters of a profile live in one array, SbplProfile::filters, where a filter's children
// are a range that comes after it.
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
  Kind kind = Kind::Literal;
  std::string_view value;  // the constant argument; for (param "NAME"), NAME
  bool is_param = false;   // Literal/Subpath: `value` names a parameter
  // Set by bind_params for a parameter that has a value: that value, in its SbplParams.
  const std::string_view* param_value = nullptr;
  // RequireAll/RequireAny/RequireNot: SbplProfile::filters[first_child, end_child).
  uint32_t first_child = 0, end_child = 0;

  bool is_path() const { return kind == Kind::Literal || kind == Kind::Subpath; }
};

struct SbplRule {
  bool allow = false;
  std::vector<std::string_view> operations;  // as written: "file-write*", "process-exec", ...
  uint64_t operation_bits = 0;               // the same, as bits over the subset's operations
  // SbplProfile::filters[first_filter, end_filter); none: the rule applies
  // unconditionally. The filters nested in them follow, up to the next rule's first.
  uint32_t first_filter = 0, end_filter = 0;
  int line = 0;  // where the rule starts in the profile text
};

struct SbplIndex;  // what bind_params adds, see sbpl_evaluator.cpp

struct SbplProfile {
  std::shared_ptr<const std::string> text;  // the text read, which every value views
  bool default_allow = false;               // (allow default) / (deny default)
  int default_line = 0;                     // where that default rule starts
  std::vector<SbplRule> rules;
  std::vector<SbplFilter> filters;         // of every rule, each list in a range of its own
  std::shared_ptr<const SbplIndex> index;  // set by bind_params

  // A rule's filters, alternatives to one another; empty when it applies unconditionally.
  std::span<const SbplFilter> filters_of(const SbplRule& r) const {
    return {filters.data() + r.first_filter, filters.data() + r.end_filter};
  }
  // The filters under a (require-all ...), (require-any ...) or (require-not ...); empty
  // for the others.
  std::span<const SbplFilter> children(const SbplFilter& f) const {
    return {filters.data() + f.first_child, filters.data() + f.end_child};
  }
};

// Whether `rule` applies to the concrete operation `operation` (no '*'): it names it, or a
// wildcard that covers it (`file-write*` covers `file-write-create`).
bool sbpl_rule_covers(const SbplRule& rule, std::string_view operation);

// Parses the text zpolicy emits; anything outside the subset is an error naming the
// form: `(version 1)` first, then exactly one `(allow|deny default)`, then rules whose
// operations and filters are listed above, each filter only on operations whose target
// it tests (no `sysctl-name` on `file-write*`).
ir::Result<SbplProfile> parse_sbpl(std::string_view text);

// The names a profile reads with (param "..."), sorted and unique.
std::vector<std::string> referenced_params(const SbplProfile& profile);

// The names a bound profile reads that bind_params found no value for, sorted and unique.
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

// Every combination, subpath reading first, then precedence in declaration order: model
// m is precedence m % 4 under reading m / 4.
const std::vector<SbplModel>& all_sbpl_models();

// The parameters' values by name, viewed: the strings they view (the params.txt pairs,
// say) must outlive the table and what is bound with it. In the order given.
class SbplParams {
 public:
  using value_type = std::pair<std::string_view, std::string_view>;
  using const_iterator = std::vector<value_type>::const_iterator;

  SbplParams() = default;
  SbplParams(std::initializer_list<value_type> pairs) : SbplParams(pairs.begin(), pairs.end()) {}
  // Pairs whose members convert to string_view; of a name given twice, the first value.
  template <class It>
  SbplParams(It first, It last) {
    for (; first != last; ++first) insert(first->first, first->second);
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
    return it == index_.end() ? end() : begin() + static_cast<std::ptrdiff_t>(it->second);
  }

  const_iterator begin() const { return pairs_.begin(); }
  const_iterator end() const { return pairs_.end(); }
  size_t size() const { return pairs_.size(); }

 private:
  std::vector<value_type> pairs_;
  std::unordered_map<std::string_view, size_t> index_;  // position in pairs_
};

// `profile` with each (param "NAME") looked up in `params` (undefined names stay unbound
// and match nothing), and the index that lets a query look up the path filters a target
// meets instead of comparing it with every filter (profiles list a filter per protected
// path). The result points into `params`, which must outlive it unchanged. Taken by
// value: a caller done with the unbound profile moves it in.
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
// check unbound_params (or referenced_params) first. A profile not bound yet is bound
// with `params` for the call.
SbplDecision decide(const SbplProfile& profile, std::string_view operation, std::string_view target,
                    const SbplParams& params, const SbplModel& model);

// decide() under every model, in all_sbpl_models() order. Without `with_trace` the traces
// stay empty: a verifier asks many questions and explains only the answers that are wrong.
std::vector<SbplDecision> decide_all_models(const SbplProfile& profile, std::string_view operation,
                                            std::string_view target, const SbplParams& params,
                                            bool with_trace = true);

// decide_all_models() without traces for a fixed list of operations on one target at a
// time: which rules match depends on the operation only through whether the rules name
// it (and creation's subpath reading), so the target is matched once for all the
// operations. `profile` is bound, and must outlive the query.
class SbplTargetQuery {
 public:
  SbplTargetQuery(const SbplProfile& profile, const std::vector<std::string>& operations);
  // Element k: bit m set when all_sbpl_models()[m] allows operations[k] on `target`.
  std::vector<uint32_t> allowed(std::string_view target) const;
  // operations[0] on `target` under each model, as decide_all_models() answers.
  std::vector<SbplDecision> decisions(std::string_view target, bool with_trace) const;
  // The rules naming one of the operations that are unconditional or have a filter other
  // than a literal or subpath, ascending. Those that match a target no path filter names
  // are matched against every target, so a verifier bounds how many there may be.
  std::vector<int> rules_matched_per_target() const;

 private:
  const SbplProfile& profile_;
  std::vector<uint64_t> covering_;  // by operation: the profile operations that cover it
  std::vector<bool> create_;        // by operation: file-write-create
  std::vector<bool> candidate_;     // by rule: it names one of the operations
  std::vector<int> untouched_;      // the candidates that match a target nothing names
  std::vector<uint32_t> tested_;    // the candidates' leaves the index does not hold
  std::vector<size_t> same_as_;     // by operation: the first that gets the same answers
};

}  // namespace zpolicy::compiler
