#pragma once

// The options of the git subcommands whose command line zpolicy reads (git_arguments.cpp),
// and the one matcher that reads them as git's parse-options does (red team A15C-2..5).
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zpolicy::compiler::git_options {

// What an option takes: nothing, the next word or a glued value (`--o=v`, `-ov`), or only a
// glued value (an optional value: `--signed`, `--signed=yes`).
enum class Takes { Nothing, Value, Optional };
// What git does with the option's value: the repository it connects to, a command it hands
// to a shell (or runs), a directory of hooks to copy (`--template`), or anything else.
enum class Means { Other, Repository, Command, Directory };

struct Option {
  std::string_view name;  // long name, without `--` ("" none)
  char letter;            // short name (0: none)
  Takes takes = Takes::Nothing;
  Means means = Means::Other;
};

// Which operands name a repository: none, or the first (all of `fetch --multiple`).
enum class Operands { None, First };
struct Table {
  std::string_view subcommand;
  std::span<const Option> options;
  bool complete;  // an option not listed refuses
  Operands operands;
};
// The table of `sub` (a subcommand git runs), none for one zpolicy reads no option of;
// `git submodule add`'s and `git remote`'s verbs have their own tables.
const Table* table_of(std::string_view sub);
extern const Table kSubmoduleAddTable;
extern const Table kRemoteAddTable;
extern const Table kRemoteSetUrlTable;
extern const Table kRemoteOtherTable;

// An option found on the command line: its value (none for a flag or a negation), the
// index of the word that holds the value, and the option as written for messages.
struct Matched {
  const Option* option;
  std::optional<std::string> value;
  size_t word;
  std::string as_written;
};
struct Operand {
  std::string text;
  size_t word;
};
struct Parsed {
  std::vector<Matched> options;
  std::vector<Operand> operands;
  std::optional<std::string> unreadable;
};

// The one option matcher: long options exact or by a prefix (as git's parse-options takes
// them), `--opt=value` or the value in the next word, short options in clusters (`-qo
// VALUE`, `-qoVALUE`: a letter that takes a value takes the rest of the cluster, or the
// next word), `--` and `--end-of-options`; options and operands mix. With a complete
// table, an unknown option or a prefix of more than one is `unreadable`; with a partial
// one, an unknown option is passed over and a prefix of several is each of them.
Parsed match_options(const Table& t, const std::vector<std::string>& words, size_t from);

}  // namespace zpolicy::compiler::git_options
