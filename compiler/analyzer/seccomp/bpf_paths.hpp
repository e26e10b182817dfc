#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"
#include "compiler/analyzer/seccomp/word_set.hpp"

namespace zpolicy::compiler {

// struct seccomp_data as 16 words of 32 bits, in the order of their offsets: nr, arch,
// the instruction pointer's low and high word, then each argument's low and high word.
constexpr size_t kDataWords = 16;
constexpr uint8_t kWordNr = 0, kWordArch = 1;
constexpr uint8_t arg_low_word(unsigned i) { return static_cast<uint8_t>(4 + 2 * i); }
constexpr uint8_t arg_high_word(unsigned i) { return static_cast<uint8_t>(5 + 2 * i); }

// What a register or scratch word holds on a path: a constant, or a word of the call
// under a mask (`ld [k]`, then any number of `and #c`). Anything else a filter can
// compute from the call is not followed (see walk_paths).
struct SymbolicValue {
  enum class Kind : uint8_t { Const, Word };
  Kind kind = Kind::Const;
  uint8_t word = 0;    // Word: which word of seccomp_data
  uint32_t value = 0;  // Const: the value; Word: the mask
};

// One path from the entry to a return: the calls that take it (a product of one set
// per word) and the value it returns, the same for all of them.
struct BpfPath {
  std::array<WordSet, kDataWords> words;
  size_t ret_pc = 0;
  uint32_t ret = 0;
};

struct PathWalkLimits {
  size_t max_paths = 4096;
  size_t search_budget = 200'000'000;  // WordSet::witness steps in all (about 0.6 s)
};

// Why a program could not be followed exactly; verification refuses it.
struct Unprovable {
  size_t instruction = 0;
  std::string why;
  std::string str() const;
};

// Follows every path of a program the loader accepts (so loop-free, every jump forward)
// from its entry, forking at each comparison that depends on the call, and calls
// `on_path` for each path that some call can take. Comparisons between a word under a
// mask and a constant (jeq, jset, and jgt/jge of an unmasked word) are kept exactly;
// anything the sets cannot represent exactly — arithmetic other than `and` on a loaded
// word, a comparison of two loaded words, a shift by 32 or more through X, a division
// by a loaded word, returning a value that depends on the call — stops the walk with
// the instruction and the reason, as does a program with more than `max_paths` paths.
// `on_path` may use the shared search budget too, and stops the walk by returning why.
using PathVisitor = std::function<std::optional<std::string>(const BpfPath&, size_t& budget)>;
std::optional<Unprovable> walk_paths(std::span<const BpfInsn> program, const PathVisitor& on_path,
                                     const PathWalkLimits& limits = {});

}  // namespace zpolicy::compiler
