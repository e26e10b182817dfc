#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tests/fuzz/rng.hpp"

namespace zpolicy::fuzz {

// The syntax an input is written in: it picks the token-aware edits (a line of YAML, an
// argv option with its operands, an S-expression, a BPF instruction, a JSON element, a
// git index's big-endian fields, entries and extensions).
enum class Grammar { Yaml, Argv, Bpf, Sexpr, Params, Json, GitIndex };

// Inputs never grow past the 1 MiB the analyzer's budget speaks of (issue 19 §2).
inline constexpr size_t kMaxInput = size_t{1} << 20;

// Applies a few random edits to `input`: byte flips, inserts, deletes, splices from
// `donors` (other seeds of the same kind), and the grammar's own edits, among them the
// hostile ones (deep nesting, paths of many components, one token repeated many times).
// The same generator state gives the same result.
std::string mutate(std::string input, Grammar grammar, const std::vector<std::string>& donors,
                   Rng& rng);

// One hostile edit only, sized between `min_size` and kMaxInput bytes of growth: what
// the bench mode measures against the budget.
std::string mutate_hostile(std::string input, Grammar grammar, size_t min_size, Rng& rng);

}  // namespace zpolicy::fuzz
