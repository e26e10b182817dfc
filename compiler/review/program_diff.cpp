#include "compiler/review/program_diff.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "compiler/analyzer/seccomp/bpf_paths.hpp"
#include "compiler/review/syscall_words.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::compiler::review {
namespace {

using WKind = WordSet::Witness::Kind;
using Words = std::array<WordSet, kDataWords>;
using Say = std::function<std::string(uint64_t)>;

// The same search budget as the proof's walk (bpf_paths.hpp), for the cells' searches.
constexpr size_t kSearchBudget = 200'000'000;
constexpr uint32_t kActionMask = 0xffff0000u;  // SECCOMP_RET_ACTION_FULL

// The kernel's precedence of actions (seccomp(2)): kill_process, kill_thread, trap,
// errno, user_notif, trace, log, allow; a step down lets more through. -1 for a value
// no action has.
int precedence(uint32_t ret) {
  switch (ret & kActionMask) {
    case 0x80000000u:
      return 7;
    case 0x00000000u:
      return 6;
    case 0x00030000u:
      return 5;
    case 0x00050000u:
      return 4;
    case 0x7fc00000u:
      return 3;
    case 0x7ff00000u:
      return 2;
    case 0x7ffc0000u:
      return 1;
    case 0x7fff0000u:
      return 0;
  }
  return -1;
}

// Whether two returns differ in what they let through, and which way. The data of an
// action (which errno) is not a difference; a value no action has, against anything
// else, counts as a widening so that it never passes unseen.
std::optional<Direction> change(uint32_t was, uint32_t now) {
  if ((was & kActionMask) == (now & kActionMask)) return std::nullopt;
  const int a = precedence(was), b = precedence(now);
  if (a < 0 || b < 0) return Direction::Widening;
  return b < a ? Direction::Widening : Direction::Narrowing;
}

std::string action_words(uint32_t ret) {
  const auto a = decode_seccomp_ret(ret);
  return a ? a->str() : seccomp_action_text(ret);
}

// The searches of one comparison, under one budget; one that runs out makes the whole
// comparison refuse rather than drop a cell.
struct Search {
  size_t budget = kSearchBudget;
  bool exhausted = false;

  std::optional<uint32_t> member(const WordSet& s) {
    const auto w = s.witness(budget);
    if (w.kind == WKind::Unknown) exhausted = true;
    if (w.kind == WKind::Found) return w.value;
    return std::nullopt;
  }
  bool empty(const WordSet& s) {
    const auto w = s.witness(budget);
    if (w.kind == WKind::Unknown) exhausted = true;
    return w.kind == WKind::Empty;
  }
  std::optional<uint32_t> single(const WordSet& s) {
    const auto w = member(s);
    if (!w) return std::nullopt;
    WordSet rest = s;
    rest.not_bits(UINT32_MAX, *w);
    return empty(rest) ? w : std::nullopt;
  }
};

bool any(const WordSet& s) {
  const auto p = s.parts();
  return p.lo == 0 && p.hi == UINT32_MAX && p.known_mask == 0 && p.excluded.empty() &&
         p.excluded_values.empty();
}

std::string bits_words(const Say& say, uint32_t mask, bool all) {
  if (std::popcount(mask) == 1) return say(mask);
  return (all ? "all of " : "any of ") + say(mask);
}

// A word's set in words, one condition each: "arg0 == 4242", "type has SOCK_RAW",
// "instruction_pointer low word != 0". Nothing when every word is in it. Whole words
// ruled out in `skip` are left unsaid (the subject already says them).
void set_words(const std::string& label, const WordSet& s, const Say& say, Search& search,
               std::vector<std::string>& out, const std::set<uint32_t>& skip = {}) {
  if (any(s)) return;
  if (const auto one = search.single(s)) {
    out.push_back(label + " == " + say(*one));
    return;
  }
  const auto p = s.parts();
  if (p.lo > 0 && p.hi < UINT32_MAX)
    out.push_back(label + " in " + say(p.lo) + ".." + say(p.hi));
  else if (p.lo > 0)
    out.push_back(label + " >= " + say(p.lo));
  else if (p.hi < UINT32_MAX)
    out.push_back(label + " <= " + say(p.hi));
  if (p.known_mask != 0) {
    if (p.known_value == p.known_mask)
      out.push_back(label + " has " + bits_words(say, p.known_mask, true));
    else if (p.known_value == 0)
      out.push_back(label + " has none of " + say(p.known_mask));
    else
      out.push_back(label + " & " + say(p.known_mask) + " == " + say(p.known_value));
  }
  std::vector<std::string> values;
  for (uint32_t v : p.excluded_values)
    if (v >= p.lo && v <= p.hi && (v & p.known_mask) == p.known_value && !skip.contains(v))
      values.push_back(say(v));
  if (values.size() == 1) out.push_back(label + " != " + values.front());
  if (values.size() > 1) {
    std::string list;
    for (const auto& v : values) list += (list.empty() ? "" : ", ") + v;
    out.push_back(label + " not in {" + list + "}");
  }
  std::set<std::pair<uint32_t, uint32_t>> said;
  for (const auto& x : p.excluded) {
    if (!said.insert({x.mask, x.value}).second) continue;
    if (x.value == 0)
      out.push_back(label + " has " + bits_words(say, x.mask, false));
    else if (x.value == x.mask)
      out.push_back(label + (std::popcount(x.mask) == 1 ? " lacks " : " lacks one of ") +
                    say(x.mask));
    else
      out.push_back(label + " & " + say(x.mask) + " != " + say(x.value));
  }
}

std::string number(uint64_t v) { return value_words({}, 0, v); }

// An argument of `call` in words: whole when both words are one value, otherwise each
// word that is constrained. An `int` argument whose high word is free is named by its
// low word alone, the only one the kernel reads.
void argument_words(std::string_view call, unsigned i, ir::ArgWidth width, const Words& w,
                    Search& search, std::vector<std::string>& out) {
  const WordSet &hi = w[arg_high_word(i)], &lo = w[arg_low_word(i)];
  const std::string name = argument_name(call, i);
  const Say named = [&](uint64_t v) { return value_words(call, i, v); };
  if (any(hi) && any(lo)) return;
  const auto h = search.single(hi), l = search.single(lo);
  if (h && l) {
    out.push_back(name + " == " + named(uint64_t{*h} << 32 | *l));
    return;
  }
  set_words(name + " high word", hi, number, search, out);
  set_words(any(hi) && width == ir::ArgWidth::U32 ? name : name + " low word", lo, named, search,
            out);
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// The cell's conditions on the arguments (as arguments of `info`, or numbered) and the
// instruction pointer.
std::vector<std::string> call_conditions(const ir::SyscallInfo* info, const Words& w,
                                         Search& search) {
  std::vector<std::string> out;
  for (unsigned i = 0; i < 6; ++i)
    argument_words(info ? info->name : std::string_view{}, i,
                   info ? info->args[i] : ir::ArgWidth::U64, w, search, out);
  const WordSet &hi = w[3], &lo = w[2];
  const auto h = search.single(hi), l = search.single(lo);
  if (h && l && !(any(hi) && any(lo))) {
    out.push_back("instruction_pointer == " + number(uint64_t{*h} << 32 | *l));
  } else {
    set_words("instruction_pointer high word", hi, number, search, out);
    set_words("instruction_pointer low word", lo, number, search, out);
  }
  return out;
}

struct Abi {
  ir::Arch arch;
  const char* suffix;
};
constexpr Abi kAbis[] = {
    {ir::Arch::X86_64, ""}, {ir::Arch::X32, " on x32"}, {ir::Arch::I386, " on i386"}};
// Rows of calls on an arch that is none of the three.
constexpr int kOtherArch = 3;
std::string abi_suffix(int abi) {
  return abi == kOtherArch ? " on another architecture" : kAbis[abi].suffix;
}

// One row: where it sorts (ABI, then number: "any call" first, numbers outside the table
// last), what it names, its conditions, and the two actions.
using ProgramRowKey =
    std::tuple<int, int64_t, std::string, std::string, int, std::string, std::string>;
constexpr int64_t kAnyCall = -1, kOutside = INT64_MAX;
// Examples named for numbers outside the table, and calls named in a row that stands for
// several: past this many, the rest are counted.
constexpr size_t kExamplesNamed = 3;

// "a", "a or b", "a, b or c" (`last` is the word before the last item).
std::string list_words(const std::vector<std::string>& items, const char* last) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? std::string(" ") + last + " " : ", ") + items[i];
  return out;
}

// Where a row's calls return, on one side.
std::string returned_at(const std::set<size_t>& pcs) {
  std::vector<std::string> named;
  for (size_t pc : pcs)
    if (named.size() < kExamplesNamed) named.push_back(std::to_string(pc));
  if (pcs.size() == 1) return "returned at instruction " + named.front();
  if (pcs.size() > kExamplesNamed)
    named.push_back(std::to_string(pcs.size() - kExamplesNamed) + " more");
  return "returned at instructions " + list_words(named, "and");
}

struct Row {
  Difference d;
  std::string name;  // the call, without the ABI's suffix
  std::set<size_t> was_pcs, now_pcs;
  std::set<uint32_t> outside;  // numbers outside the table, for examples
};

struct Rows {
  std::map<ProgramRowKey, Row> rows;

  void add(int abi, int64_t order, const std::string& name, const std::string& when, Direction dir,
           const BpfPath& was, const BpfPath& now, std::optional<uint32_t> example = std::nullopt) {
    const std::string subject = name + abi_suffix(abi);
    ProgramRowKey key{abi,
                      order,
                      subject,
                      when,
                      static_cast<int>(dir),
                      action_words(was.ret),
                      action_words(now.ret)};
    auto [at, fresh] = rows.try_emplace(std::move(key));
    Row& row = at->second;
    if (fresh) {
      row.name = name;
      row.d.targets = {ir::Target::Linux};
      row.d.area = Area::Syscalls;
      row.d.direction = dir;
      row.d.before = {action_words(was.ret), {}, {"seccomp.bpf", 0, 0}};
      row.d.after = {action_words(now.ret), {}, {"seccomp.bpf", 0, 0}};
      row.d.subject = subject + when;
    }
    row.was_pcs.insert(was.ret_pc);
    row.now_pcs.insert(now.ret_pc);
    if (example && row.outside.size() < kExamplesNamed) row.outside.insert(*example);
  }

  // The rows in order. Numbers outside the table are one row per ABI, conditions and
  // actions, with a few of them named; none where "any call" says it already. Calls of
  // the table that change alike (the same ABI, conditions and actions) are one row when
  // there are more than kExamplesNamed of them: an allow behind the instruction pointer
  // changes every call the filter refuses, and 71 rows would say one thing 71 times.
  std::vector<Difference> done() {
    using Alike = std::tuple<int, std::string, int, std::string, std::string>;
    auto alike = [](const ProgramRowKey& k) {
      return Alike{std::get<0>(k), std::get<3>(k), std::get<4>(k), std::get<5>(k), std::get<6>(k)};
    };
    std::map<Alike, std::vector<Row*>> calls;
    for (auto& [key, row] : rows)
      if (std::get<1>(key) != kAnyCall && std::get<1>(key) != kOutside)
        calls[alike(key)].push_back(&row);
    std::vector<Difference> out;
    for (auto& [key, row] : rows) {
      const int abi = std::get<0>(key);
      const std::string suffix = abi_suffix(abi);
      Difference d = std::move(row.d);
      d.before.reason = returned_at(row.was_pcs);
      d.after.reason = returned_at(row.now_pcs);
      if (std::get<1>(key) == kOutside) {
        ProgramRowKey any = key;
        std::get<1>(any) = kAnyCall;
        std::get<2>(any) = "any call" + suffix;
        if (rows.contains(any)) continue;
        std::vector<std::string> such;
        for (uint32_t n : row.outside)
          such.push_back("#" + (n < 0x10000 ? std::to_string(n) : number(n)));
        d.subject =
            row.name + suffix + " (such as " + list_words(such, "or") + ")" + std::get<3>(key);
      } else if (std::get<1>(key) != kAnyCall) {
        const auto& group = calls.at(alike(key));
        if (group.size() > kExamplesNamed) {
          if (group.front() != &row) continue;
          std::set<size_t> was_pcs, now_pcs;
          std::vector<std::string> named;
          for (const Row* r : group) {
            was_pcs.insert(r->was_pcs.begin(), r->was_pcs.end());
            now_pcs.insert(r->now_pcs.begin(), r->now_pcs.end());
            d.paths.push_back(r->name);
            if (named.size() < kExamplesNamed) named.push_back(r->name);
          }
          named.push_back(std::to_string(group.size() - kExamplesNamed) + " more");
          d.subject = std::to_string(group.size()) + " calls" + suffix + " (" +
                      list_words(named, "and") + ")" + std::get<3>(key);
          d.before.reason = returned_at(was_pcs);
          d.after.reason = returned_at(now_pcs);
        }
      }
      out.push_back(std::move(d));
    }
    return out;
  }
};

// The calls of one ABI in a cell whose numbers (already limited to the ABI) are `nr`: a
// row per syscall of the table, one for "any call" when the cell holds them all and
// numbers outside the table too, and one for the numbers outside the table.
void abi_rows(int abi, const WordSet& nr, const Words& w, Direction dir, const BpfPath& was,
              const BpfPath& now, Search& search, Rows& rows) {
  const ir::Arch arch = kAbis[abi].arch;
  const uint32_t base = arch == ir::Arch::X32 ? ir::kX32SyscallBit : 0;
  std::vector<const ir::SyscallInfo*> known;
  size_t table = 0;
  uint32_t end = base;
  for (const ir::SyscallInfo& s : ir::syscall_table(arch)) {
    if ((s.nr & ir::kX32SyscallBit) != base) continue;
    ++table;
    end = std::max(end, s.nr + 1);
    if (nr.contains(s.nr)) known.push_back(&s);
  }
  // Numbers outside the table, named by examples that show their spread: the first and
  // the last hole of the table, and the first number past its end.
  std::vector<uint32_t> outside;
  for (uint32_t n = base; n < end; ++n)
    if (nr.contains(n) && !ir::find_syscall(arch, n)) {
      outside.push_back(n);
      break;
    }
  for (uint32_t n = end; !outside.empty() && --n > outside.front();)
    if (nr.contains(n) && !ir::find_syscall(arch, n)) {
      outside.push_back(n);
      break;
    }
  if (nr.contains(end)) {
    outside.push_back(end);
  } else {
    WordSet past = nr;
    past.at_least(end);
    if (const auto m = search.member(past)) outside.push_back(*m);
  }
  const auto when = [&](const ir::SyscallInfo* info) {
    const auto c = call_conditions(info, w, search);
    return c.empty() ? std::string() : " when " + join(c, " and ");
  };
  if (known.size() == table && !outside.empty()) {
    rows.add(abi, kAnyCall, "any call", when(nullptr), dir, was, now);
    return;
  }
  for (const ir::SyscallInfo* s : known)
    rows.add(abi, s->nr, std::string(s->name), when(s), dir, was, now);
  const std::string table_name =
      "numbers outside the " + std::string(ir::to_string(arch)) + " table";
  for (uint32_t n : outside)
    rows.add(abi, kOutside, table_name, when(nullptr), dir, was, now, n & ~ir::kX32SyscallBit);
}

// The rows of one cell: the calls both paths take, split by ABI as the kernel tells them
// apart (the arch word, and on x86_64 the x32 bit of the number).
void cell_rows(const Words& w, Direction dir, const BpfPath& was, const BpfPath& now,
               Search& search, Rows& rows) {
  const uint32_t x86 = ir::kAuditArchX86_64, i386 = ir::audit_arch(ir::Arch::I386);
  if (w[kWordArch].contains(x86)) {
    WordSet native = w[kWordNr], x32 = w[kWordNr];
    native.bits(ir::kX32SyscallBit, 0);
    x32.bits(ir::kX32SyscallBit, ir::kX32SyscallBit);
    if (!search.empty(native)) abi_rows(0, native, w, dir, was, now, search, rows);
    if (!search.empty(x32)) abi_rows(1, x32, w, dir, was, now, search, rows);
  }
  if (w[kWordArch].contains(i386)) abi_rows(2, w[kWordNr], w, dir, was, now, search, rows);
  WordSet foreign = w[kWordArch];
  foreign.not_bits(UINT32_MAX, x86);
  foreign.not_bits(UINT32_MAX, i386);
  if (search.empty(foreign)) return;
  std::vector<std::string> c;
  set_words("arch", w[kWordArch], number, search, c, {x86, i386});
  set_words("number", w[kWordNr], number, search, c);
  for (auto& more : call_conditions(nullptr, w, search)) c.push_back(std::move(more));
  rows.add(kOtherArch, kAnyCall, "any call", c.empty() ? "" : " when " + join(c, " and "), dir, was,
           now);
}

// Two programs of up to 4096 paths each (walk_paths' limit) that tell calls apart by
// words other than the number have up to 16.7 million pairs of paths to intersect, and
// each pair that meets is a cell with rows of its own (about 0.1 ms each: a pass over the
// syscall tables). Bounded so that any two programs are answered within issue 19's 2 s
// (docs/review.md "Cost"); the programs zpolicy emits meet in a few hundred pairs.
constexpr size_t kMaxPairs = size_t{1} << 19;
constexpr size_t kMaxCells = size_t{1} << 12;

std::string too_complex(size_t limit, const char* what) {
  return "too complex to compare exactly: more than " + std::to_string(limit) + " " + what +
         " (the programs tell calls apart by words other than the number); compare each with the policy "
         "(zpolicy verify) instead";
}

std::variant<std::vector<BpfPath>, ProgramDiffError> paths_of(std::span<const BpfInsn> program,
                                                              bool after) {
  std::vector<BpfPath> out;
  const auto unprovable = walk_paths(program, [&](const BpfPath& p, size_t&) {
    out.push_back(p);
    return std::optional<std::string>();
  });
  if (unprovable)
    return ProgramDiffError{after, unprovable->instruction,
                            "cannot be compared exactly: " + unprovable->why};
  return out;
}

}  // namespace

std::variant<std::vector<Difference>, ProgramDiffError> diff_programs(
    std::span<const BpfInsn> before, std::span<const BpfInsn> after) {
  auto a = paths_of(before, false);
  if (auto* e = std::get_if<ProgramDiffError>(&a)) return *e;
  auto b = paths_of(after, true);
  if (auto* e = std::get_if<ProgramDiffError>(&b)) return *e;
  const auto& ours = std::get<std::vector<BpfPath>>(a);
  const auto& theirs = std::get<std::vector<BpfPath>>(b);
  // A filter tells calls apart mostly by comparing words with single values (a chain of
  // `jeq #nr`), so the pairs that can meet are found without searching: the other side's
  // paths by fixed number, and two paths that fix a word to different values never meet.
  const auto fixed = [](const BpfPath& p) {
    std::array<std::optional<uint32_t>, kDataWords> out;
    for (size_t i = 0; i < kDataWords; ++i)
      if (const auto parts = p.words[i].parts(); parts.known_mask == UINT32_MAX)
        out[i] = parts.known_value;
    return out;
  };
  std::vector<std::array<std::optional<uint32_t>, kDataWords>> their_fixed;
  std::map<uint32_t, std::vector<size_t>> by_number;
  std::vector<size_t> any_number;
  for (size_t j = 0; j < theirs.size(); ++j) {
    their_fixed.push_back(fixed(theirs[j]));
    if (const auto n = their_fixed.back()[kWordNr])
      by_number[*n].push_back(j);
    else
      any_number.push_back(j);
  }
  Search search;
  Rows rows;
  size_t pairs = 0, cells = 0;
  for (const BpfPath& was : ours) {
    const auto our_fixed = fixed(was);
    std::vector<size_t> candidates = any_number;
    if (!our_fixed[kWordNr]) {
      candidates.resize(theirs.size());
      for (size_t j = 0; j < theirs.size(); ++j) candidates[j] = j;
    } else if (const auto at = by_number.find(*our_fixed[kWordNr]); at != by_number.end()) {
      candidates.insert(candidates.end(), at->second.begin(), at->second.end());
      std::sort(candidates.begin(), candidates.end());
    }
    for (size_t j : candidates) {
      const BpfPath& now = theirs[j];
      const auto dir = change(was.ret, now.ret);
      if (!dir) continue;
      bool apart = false;
      for (size_t i = 0; i < kDataWords && !apart; ++i)
        apart = our_fixed[i] && their_fixed[j][i] && *our_fixed[i] != *their_fixed[j][i];
      if (apart) continue;
      if (++pairs > kMaxPairs)
        return ProgramDiffError{false, std::nullopt,
                                too_complex(kMaxPairs, "pairs of paths to compare")};
      Words cell;
      bool empty = false;
      // Number and arch are the first words: they tell most pairs of paths apart.
      for (size_t i = 0; i < kDataWords && !empty; ++i) {
        cell[i] = was.words[i];
        cell[i].intersect(now.words[i]);
        empty = search.empty(cell[i]);
      }
      if (!empty && ++cells > kMaxCells)
        return ProgramDiffError{false, std::nullopt,
                                too_complex(kMaxCells, "sets of calls are answered differently")};
      if (!empty) cell_rows(cell, *dir, was, now, search, rows);
      if (search.exhausted)
        return ProgramDiffError{false, was.ret_pc,
                                "too complex to compare within the search budget"};
    }
  }
  return rows.done();
}

}  // namespace zpolicy::compiler::review
