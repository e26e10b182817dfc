// The git settings of the caller's environment (compiler/resolve/git_config_environment.hpp)
// as git 2.39's config.c git_config_from_parameters reads them; the exported strings are
// what `git -c … alias` puts in $GIT_CONFIG_PARAMETERS (printed by an alias `!printenv`).
#include "compiler/resolve/git_config_environment.hpp"

#include <boost/test/unit_test.hpp>
#include <optional>
#include <string>
#include <vector>

using namespace zpolicy::compiler;

namespace {

struct Setting {
  std::string variable, var;
  std::optional<std::string> value;
  bool operator==(const Setting&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Setting& s) {
  return os << s.variable << " " << s.var << "=" << (s.value ? "'" + *s.value + "'" : "<none>");
}

std::vector<Setting> settings_of(const std::vector<std::string>& env) {
  const GitEnvironmentSettings got = git_config_environment(CallerEnvironment(env));
  BOOST_TEST(!got.refusal.has_value(), got.refusal.value_or(""));
  std::vector<Setting> out;
  for (const auto& s : got.settings) out.push_back({s.variable, s.entry.var, s.entry.value});
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(git_config_environment_reading)

BOOST_AUTO_TEST_CASE(what_git_dash_c_exports_is_read_whole) {
  // git -c include.path=/x/y -c "core.hooksPath=it's !here" -c flag.bool
  //     -c Sec.SubSect.Name=v -c empty.val= -c alias.pe='!printenv GIT_CONFIG_PARAMETERS' pe
  const std::string exported =
      "GIT_CONFIG_PARAMETERS='include.path'='/x/y' 'core.hooksPath'='it'\\''s '\\!'here' "
      "'flag.bool'= 'Sec.SubSect.Name'='v' 'empty.val'='' "
      "'alias.pe'=''\\!'printenv GIT_CONFIG_PARAMETERS'";
  const std::string p = "$GIT_CONFIG_PARAMETERS";
  const std::vector<Setting> expected = {
      {p, "include.path", "/x/y"},    {p, "core.hookspath", "it's !here"},
      {p, "flag.bool", std::nullopt}, {p, "sec.SubSect.name", "v"},
      {p, "empty.val", ""},           {p, "alias.pe", "!printenv GIT_CONFIG_PARAMETERS"}};
  BOOST_TEST(settings_of({exported}) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(the_old_form_and_the_counted_settings_are_read_too) {
  // Older git wrote 'key=value' words; the counted ones come first, as git applies them.
  const std::vector<Setting> expected = {{"$GIT_CONFIG_KEY_0", "core.hookspath", ".githooks"},
                                         {"$GIT_CONFIG_KEY_1", "include.path", "/t.gitconfig"},
                                         {"$GIT_CONFIG_PARAMETERS", "core.fsmonitor", "/m.sh"},
                                         {"$GIT_CONFIG_PARAMETERS", "a.b", std::nullopt}};
  BOOST_TEST(
      settings_of({"GIT_CONFIG_PARAMETERS='core.fsmonitor=/m.sh' 'a.b'", "GIT_CONFIG_COUNT=2",
                   "GIT_CONFIG_KEY_0=Core.HooksPath", "GIT_CONFIG_VALUE_0=.githooks",
                   "GIT_CONFIG_KEY_1=include.path", "GIT_CONFIG_VALUE_1=/t.gitconfig"}) == expected,
      boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(counted_settings_stop_where_git_dies) {
  // git dies at a missing key or value: nothing after it is applied, nothing runs.
  BOOST_TEST(settings_of({"GIT_CONFIG_COUNT=3", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=1",
                          "GIT_CONFIG_KEY_2=c.d", "GIT_CONFIG_VALUE_2=2"})
                 .size() == 1);
  BOOST_TEST(
      settings_of({"GIT_CONFIG_COUNT=1x", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=1"}).empty());
}

BOOST_AUTO_TEST_CASE(a_parameters_string_git_cannot_read_refuses) {
  for (const std::string bad :
       {"GIT_CONFIG_PARAMETERS= 'a.b'='c'", "GIT_CONFIG_PARAMETERS='a.b'='c",
        "GIT_CONFIG_PARAMETERS=a.b=c", "GIT_CONFIG_PARAMETERS='a.b'=c",
        "GIT_CONFIG_PARAMETERS='a.b'='c'x", "GIT_CONFIG_PARAMETERS='=c'"}) {
    const GitEnvironmentSettings got = git_config_environment(CallerEnvironment({bad}));
    BOOST_TEST(got.refusal.has_value(), bad);
  }
}

BOOST_AUTO_TEST_SUITE_END()
