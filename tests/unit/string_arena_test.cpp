#include "compiler/analyzer/string_arena.hpp"

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

using namespace zpolicy::compiler;

BOOST_AUTO_TEST_SUITE(string_arena)

// Views stay valid and distinct across many blocks, strings longer than a block
// included, and the empty string needs no storage.
BOOST_AUTO_TEST_CASE(views_stay_valid_as_the_arena_grows) {
  StringArena arena;
  std::vector<std::string> want;
  std::vector<std::string_view> got;
  for (int i = 0; i < 3000; ++i) {
    std::string s = std::to_string(i) + std::string(static_cast<size_t>(i % 97), 'a' + i % 26);
    if (i % 500 == 0) s += std::string(10000, 'L');
    got.push_back(arena.store(s));
    want.push_back(std::move(s));
  }
  for (size_t i = 0; i < want.size(); ++i) BOOST_TEST_REQUIRE(got[i] == want[i]);
  BOOST_TEST(arena.store("").empty());
  std::string original = "copied";
  const std::string_view v = arena.store(original);
  original[0] = 'X';
  BOOST_TEST(v == "copied");
}

BOOST_AUTO_TEST_SUITE_END()
