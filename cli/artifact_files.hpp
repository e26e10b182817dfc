#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zpolicy/zpolicy.hpp"

namespace zpolicy::cli {

// Writes `artifacts` into `dir` (created if missing), all or nothing, never through a
// link: a compiled directory is often a cloned repository's, whose entries its author
// chose. Each file is written fresh in a private staging directory inside `dir` and then
// exchanged with its final name; if any exchange fails the earlier ones are undone. An
// entry of `dir` with an artifact's name that is not a regular file (a symlink, a
// directory, a FIFO) is refused before anything is written, and so is a `dir` that is a
// symlink. Returns false with `error` set.
bool write_artifacts(const std::string& dir, const std::vector<Artifact>& artifacts,
                     std::string& error);

// The target's artifact files found in `dir`, each read as it is; a missing one is left
// out, for the caller to judge. Read only as the regular files compile writes: an entry
// that is a symlink (its author's choice of any file the reader may read, which findings
// and diffs would then print: red team A12-1), a FIFO (which blocks), a device or a
// directory, or a file larger than kMaxArtifactBytes, is left out too, with the reason in
// `refused`; the caller refuses to judge the directory then.
inline constexpr size_t kMaxArtifactBytes = size_t{16} << 20;

// One artifact file read that way: its bytes, or why it was not read (`refusal` is empty
// when the entry does not exist).
struct ArtifactRead {
  std::optional<std::string> content;
  std::string refusal;
};
ArtifactRead read_artifact_file(int dir_fd, const std::string& name, const std::string& shown);
// The same for a path a user names (`inspect FILE`): its directories are followed as
// given, its last name is read only as a regular file, like a directory's entries.
ArtifactRead read_artifact_file(const std::string& path);

std::vector<Artifact> read_artifacts(const std::string& dir, Target target,
                                     std::vector<std::string>& refused);

}  // namespace zpolicy::cli
