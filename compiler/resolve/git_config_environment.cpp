#include "compiler/resolve/git_config_environment.hpp"

#include <cctype>
#include <climits>
#include <cstdlib>

namespace zpolicy::compiler {
namespace {

// As config.c git_config_parse_key writes it: section (up to the first '.') and name (after
// the last) lowercased, a subsection between them kept. A key git rejects (no '.') is
// kept as written: git then dies before it runs anything, and reading it is only more.
std::string canonical_key(std::string key) {
  const size_t first = key.find('.'), last = key.rfind('.');
  for (size_t i = 0; i < key.size(); ++i)
    if (first == std::string::npos || i < first || i > last)
      key[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(key[i])));
  return key;
}

bool blank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// quote.c sq_dequote_step: the single-quoted word at `at` (`'\''` and `'\!'` for a quote
// and a '!' between quoted parts); `at` moves past it. None where git's would fail.
std::optional<std::string> dequote_step(const std::string& text, size_t& at) {
  if (at >= text.size() || text[at] != '\'') return std::nullopt;
  std::string word;
  for (size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] != '\'') {
      word += text[i];
      continue;
    }
    if (i + 3 < text.size() && text[i + 1] == '\\' && (text[i + 2] == '\'' || text[i + 2] == '!') &&
        text[i + 3] == '\'') {
      word += text[i + 2];
      i += 3;
      continue;
    }
    at = i + 1;
    return word;
  }
  return std::nullopt;
}

}  // namespace

GitEnvironmentSettings git_config_environment(const CallerEnvironment& environment) {
  GitEnvironmentSettings out;
  int line = 0;
  auto add = [&](const std::string& variable, const std::string& key,
                 std::optional<std::string> value) {
    out.settings.push_back(
        {variable, GitConfigEntry{canonical_key(key), std::move(value), ++line}});
  };
  // A count git rejects, or a key or value missing below it, makes git (2.31 and later)
  // die before it reads any configuration; an older git ignores the count. The settings
  // before are read either way: more, never less.
  if (const auto count = environment.get("GIT_CONFIG_COUNT")) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(count->c_str(), &end, 10);
    if (end && *end == '\0' && n <= static_cast<unsigned long>(INT_MAX))
      for (unsigned long i = 0; i < n; ++i) {
        const std::string index = std::to_string(i);
        const auto key = environment.get("GIT_CONFIG_KEY_" + index);
        const auto value = environment.get("GIT_CONFIG_VALUE_" + index);
        if (!key || !value) break;
        line = 0;  // the variable names the setting
        add("$GIT_CONFIG_KEY_" + index, *key, *value);
      }
  }
  const auto params = environment.get("GIT_CONFIG_PARAMETERS");
  if (!params) return out;
  const std::string& text = *params;
  line = 0;
  // config.c parse_config_env_list.
  for (size_t at = 0; at < text.size();) {
    const auto first = dequote_step(text, at);
    bool bogus = !first;
    if (!bogus && (at >= text.size() || blank(text[at]))) {
      // Old style, 'key=value' (git_config_parse_parameter): split at the first '=', the
      // key trimmed; 'key' alone is a boolean.
      const size_t eq = first->find('=');
      std::string key = first->substr(0, eq);
      while (!key.empty() && blank(key.back())) key.pop_back();
      key.erase(0, key.find_first_not_of(" \t\n\v\f\r"));
      if (key.empty())
        bogus = true;
      else
        add("$GIT_CONFIG_PARAMETERS", key,
            eq == std::string::npos ? std::nullopt : std::optional(first->substr(eq + 1)));
    } else if (!bogus && text[at] == '=') {
      ++at;
      if (at < text.size() && text[at] == '\'') {
        const auto value = dequote_step(text, at);
        if (!value || (at < text.size() && !blank(text[at])))
          bogus = true;
        else
          add("$GIT_CONFIG_PARAMETERS", *first, *value);
      } else if (at >= text.size() || blank(text[at])) {
        add("$GIT_CONFIG_PARAMETERS", *first, std::nullopt);
      } else {
        bogus = true;
      }
    } else {
      bogus = true;
    }
    if (bogus) {
      out.refusal =
          "$GIT_CONFIG_PARAMETERS is not in the form git reads ('key'='value' "
          "words, as `git -c` exports them), so zpolicy cannot tell which settings "
          "the host's git takes from it";
      return out;
    }
    while (at < text.size() && blank(text[at])) ++at;
  }
  return out;
}

}  // namespace zpolicy::compiler
