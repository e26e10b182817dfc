// Tidy 25 (docs/redteam-2026-12.md "Tidy 25"): a config file whose lstat and fstat disagree
// refuses, and a diagnostic met twice is said once.
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>

#include "compiler/resolve/gitdir.hpp"
#include "ir/diagnostic.hpp"

using namespace zpolicy;

namespace {

struct stat file_stat(dev_t dev, ino_t ino, mode_t type) {
  struct stat st {};
  st.st_dev = dev;
  st.st_ino = ino;
  st.st_mode = type | 0644;
  return st;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tidy25)

// The config the open found is the regular file lstat found: read. Anything else was swapped
// in between (a directory, a FIFO, another file): unreadable, which refuses, never "nothing".
BOOST_AUTO_TEST_CASE(a_config_file_swapped_between_lstat_and_open_is_unreadable) {
  using Status = compiler::GitConfigFile::Status;
  const struct stat named = file_stat(1, 10, S_IFREG);
  BOOST_TEST((compiler::opened_config_status(named, named) == Status::Read));
  BOOST_TEST(
      (compiler::opened_config_status(named, file_stat(1, 11, S_IFDIR)) == Status::Unreadable));
  BOOST_TEST(
      (compiler::opened_config_status(named, file_stat(1, 10, S_IFIFO)) == Status::Unreadable));
  BOOST_TEST(
      (compiler::opened_config_status(named, file_stat(1, 11, S_IFREG)) == Status::Unreadable));
  BOOST_TEST(
      (compiler::opened_config_status(named, file_stat(2, 10, S_IFREG)) == Status::Unreadable));
}

BOOST_AUTO_TEST_CASE(a_diagnostic_met_twice_is_said_once) {
  ir::Diagnostics d;
  d.error({"f", 1, 2}, "refused");
  d.error({"f", 1, 2}, "refused");
  d.warning({"f", 1, 2}, "refused");
  d.error({"f", 1, 3}, "refused");
  d.error({"f", 1, 2}, "refused again");
  BOOST_TEST(d.all().size() == 4u);
  BOOST_TEST(d.str() ==
             "f:1:2: error: refused\nf:1:2: warning: refused\nf:1:3: error: refused\n"
             "f:1:2: error: refused again\n");
}

BOOST_AUTO_TEST_SUITE_END()
