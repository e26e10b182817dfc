#include "runner/run_records.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include "support/temp_dir.hpp"

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

// Only a file a run wrote is read as a record: a regular file of the caller's, closed to
// everybody else, with one link (red team A10B-2, defence in depth: the state directory is
// hidden from every sandbox).
BOOST_AUTO_TEST_CASE(only_private_regular_files_with_one_link_are_records) {
  zpolicy::test::TempDir dir;
  const std::string line = "v2 1 2 - /w/.env";
  for (const char* name : {"run-a", "run-open", "run-linked"}) {
    dir.write(name, line + "\n");
    BOOST_TEST_REQUIRE(chmod((dir / name).c_str(), 0600) == 0);
  }
  BOOST_TEST_REQUIRE(chmod((dir / "run-open").c_str(), 0640) == 0);
  BOOST_TEST_REQUIRE(link((dir / "run-linked").c_str(), (dir / "run-linked-too").c_str()) == 0);
  dir.symlink(dir / "run-a", "run-symlink");
  dir.mkdir("run-dir");
  BOOST_TEST_REQUIRE(mkfifo((dir / "run-fifo").c_str(), 0600) == 0);
  const auto records = read_run_records(dir.str());
  BOOST_TEST_REQUIRE(records.size() == 1u);
  BOOST_TEST(records[0].path == dir / "run-a");
  BOOST_TEST(!records[0].live);
  BOOST_TEST(records[0].lines == std::vector<std::string>{line}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::runner
