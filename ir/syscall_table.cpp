#include "ir/syscall_table.hpp"

#include <array>
#include <unordered_map>

namespace zpolicy::ir {
namespace {

using W = ArgWidth;
#include "ir/syscall_table_data.inc"

}  // namespace

const char* to_string(Arch a) {
  switch (a) {
    case Arch::X86_64:
      return "x86_64";
    case Arch::X32:
      return "x32";
    case Arch::I386:
      return "i386";
  }
  return "x86_64";
}

std::optional<Arch> parse_arch(std::string_view name) {
  if (name == "x86_64") return Arch::X86_64;
  if (name == "x32") return Arch::X32;
  if (name == "i386") return Arch::I386;
  return std::nullopt;
}

uint32_t audit_arch(Arch a) { return a == Arch::I386 ? kAuditArchI386 : kAuditArchX86_64; }

std::span<const SyscallInfo> syscall_table(Arch a) {
  switch (a) {
    case Arch::X86_64:
      return kX8664Table;
    case Arch::X32:
      return kX32Table;
    case Arch::I386:
      return kI386Table;
  }
  return {};
}

namespace {

// Lookups by number, computed at compile time, and by name, below: the compiler, the
// emitter and the verifier ask thousands of times per policy, and a scan of ~400 names
// each time was a visible share of `zpolicy compile`.
constexpr size_t kNumbers = 1024;  // every table's numbers, less kX32SyscallBit, are below

struct TableIndex {
  std::span<const SyscallInfo> table;
  uint32_t nr_base;                            // kX32SyscallBit for x32
  const std::array<int16_t, kNumbers>* by_nr;  // table position of each number, or -1
};

template <size_t N>
constexpr std::array<int16_t, kNumbers> number_index(const SyscallInfo (&table)[N], uint32_t base) {
  std::array<int16_t, kNumbers> index{};
  index.fill(-1);
  for (size_t i = 0; i < N; ++i) index.at(table[i].nr - base) = static_cast<int16_t>(i);
  return index;
}

constexpr auto kX8664ByNr = number_index(kX8664Table, 0);
constexpr auto kX32ByNr = number_index(kX32Table, kX32SyscallBit);
constexpr auto kI386ByNr = number_index(kI386Table, 0);

TableIndex table_index(Arch a) {
  switch (a) {
    case Arch::X32:
      return {kX32Table, kX32SyscallBit, &kX32ByNr};
    case Arch::I386:
      return {kI386Table, 0, &kI386ByNr};
    case Arch::X86_64:
      break;
  }
  return {kX8664Table, 0, &kX8664ByNr};
}

// Hashed rather than searched, made on first use of each table (a table's names are
// unique): the verifier reads every syscall name of a listing back.
using NameIndex = std::unordered_map<std::string_view, const SyscallInfo*>;

NameIndex name_index(std::span<const SyscallInfo> table) {
  NameIndex index;
  for (const SyscallInfo& s : table) index.emplace(s.name, &s);
  return index;
}

const NameIndex& by_name(Arch a) {
  switch (a) {
    case Arch::X32: {
      static const NameIndex x32 = name_index(kX32Table);
      return x32;
    }
    case Arch::I386: {
      static const NameIndex i386 = name_index(kI386Table);
      return i386;
    }
    case Arch::X86_64:
      break;
  }
  static const NameIndex x86_64 = name_index(kX8664Table);
  return x86_64;
}

}  // namespace

const SyscallInfo* find_syscall(Arch a, std::string_view name) {
  const NameIndex& index = by_name(a);
  const auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

const SyscallInfo* find_syscall(Arch a, uint32_t nr) {
  const TableIndex index = table_index(a);
  if (nr < index.nr_base || nr - index.nr_base >= kNumbers) return nullptr;
  const int16_t pos = (*index.by_nr)[nr - index.nr_base];
  return pos < 0 ? nullptr : &index.table[static_cast<size_t>(pos)];
}

uint32_t max_syscall_number(Arch a) { return syscall_table(a).back().nr; }

}  // namespace zpolicy::ir
