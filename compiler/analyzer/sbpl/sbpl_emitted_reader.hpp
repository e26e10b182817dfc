#pragma once

// Internal to compiler/: not part of the API other tools use (sbpl_evaluator.hpp).
// parse_sbpl reads a profile in the layout zpolicy emits with this reader first, since
// that is nearly every profile it is given and reading it through the general reader's
// forms was most of the cost of checking one. tests/unit/sbpl_reader_agreement_test.cpp
// holds it to parse_sbpl_general's answers.

#include <string_view>

#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"

namespace zpolicy::compiler {

// True, with the profile in `out`, when `text` is in the layout zpolicy emits; the
// profile is then the one parse_sbpl_general reads from it. False when it is not, and
// then `out` is unspecified: the text may still be a valid profile, or an invalid one
// whose error only parse_sbpl_general words.
bool read_emitted_profile(std::string_view text, SbplProfile& out);

}  // namespace zpolicy::compiler
