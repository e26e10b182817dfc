#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ir/syscall_policy.hpp"

namespace zpolicy::compiler::review {

// Syscall arguments in the words a reviewer knows: the argument's name where the call is
// one the built-in rules name ("domain" of socket), and constants by name (AF_INET,
// TIOCSTI, CLONE_NEWUSER, S_ISUID), otherwise "arg2" and hexadecimal (below 10, decimal).
// Names and values are ir/syscall_constants.hpp's, the table seccomp.txt is written with.
std::string argument_name(std::string_view call, unsigned index);
std::string value_words(std::string_view call, unsigned index, uint64_t value);
// The value a constant's name stands for as argument `index` of `call`, as value_words
// writes it ("AF_UNIX", "CLONE_NEWUSER|CLONE_NEWNET"); nullopt for a name it does not know
// there.
std::optional<uint64_t> value_of_words(std::string_view call, unsigned index,
                                       std::string_view words);
// "domain != AF_INET", "flags has CLONE_NEWUSER", "type lacks 0x2".
std::string condition_words(std::string_view call, const ir::ArgCondition& c);

}  // namespace zpolicy::compiler::review
