#pragma once

#include <string_view>

#include "ir/path_pattern.hpp"

namespace zpolicy::compiler {

// A directory that looks names up case-insensitively finds `.GIT` when a program asks for
// `.git`: host git then uses it as the repository, so `**/.git` must name it there
// (docs/protected-paths.md "Case-insensitive directories"). Two kinds exist on Linux: a
// directory with the casefold attribute (ext4, f2fs, tmpfs: FS_CASEFOLD_FL, set per
// directory and inherited) and a filesystem that folds everywhere (vfat, exfat, hfsplus,
// SMB shares).

// Whether the directory open at `fd` folds case, by its filesystem or its attribute.
bool folds_case(int fd);

// Whether `name`, an entry of a case-folding directory, is one a program asking for a
// name matching `component` would be given. A casefolding filesystem compares names by
// their Unicode case-folded decomposition (NFD, then full case folding). Without the
// kernel's tables this is decided exactly when every character of both sides folds to
// ASCII: ASCII letters, and the thirteen other characters whose folded decomposition is
// ASCII (KELVIN SIGN -> "k", LONG S -> "s", SHARP S -> "ss", the ff..st ligatures, GREEK
// QUESTION MARK -> ";", GREEK VARIA -> "`"). A literal all of whose characters fold to
// ASCII never equals a name holding any other character. Otherwise each other character
// is taken for any string, and the name matches when some choice would: a protection
// too many is a read-only name, one too few a hook that runs on the host.
bool matches_folded(const ir::PatternComponent& component, std::string_view name);

}  // namespace zpolicy::compiler
