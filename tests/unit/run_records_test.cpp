#include "runner/run_records.hpp"

#include <boost/test/unit_test.hpp>

// The run record's lines (runner/run_records.hpp): a placeholder is read back with the
// identity it was written with, a line of format 1 without a birth time (never enough to
// remove it), and anything else not at all (never acted on).
namespace zpolicy::runner {

BOOST_AUTO_TEST_SUITE(run_records)

BOOST_AUTO_TEST_CASE(a_line_reads_back_as_written_and_old_or_broken_lines_name_no_birth) {
  const RecordedPlaceholder born{"/w s/.env", 2049, 77, BirthTime{1796140800, 5}};
  BOOST_TEST(record_line(born) == "v2 2049 77 1796140800.000000005 /w s/.env\n");
  const auto back = parse_record_line("v2 2049 77 1796140800.000000005 /w s/.env");
  BOOST_TEST_REQUIRE(back.has_value());
  BOOST_TEST((back->path == born.path && back->dev == 2049 && back->ino == 77 &&
              back->birth == born.birth));

  const RecordedPlaceholder unborn{"/w/.git", 1, 2, std::nullopt};
  BOOST_TEST(record_line(unborn) == "v2 1 2 - /w/.git\n");
  const auto none = parse_record_line("v2 1 2 - /w/.git");
  BOOST_TEST_REQUIRE(none.has_value());
  BOOST_TEST(!none->birth.has_value());

  const auto old = parse_record_line("2049 77 /w/.env");
  BOOST_TEST_REQUIRE(old.has_value());
  BOOST_TEST((old->path == "/w/.env" && old->ino == 77 && !old->birth.has_value()));

  for (const char* broken :
       {"v2 2049 77 /w/.env", "v2 2049 77 1.5x /w/.env", "v2 2049 77 1.1000000000 /w",
        "v3 1 2 - /w/.env", "2049x 77 /w/.env", "v2 1 2 - relative", "", "v2"})
    BOOST_TEST(!parse_record_line(broken).has_value(), broken);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::runner
