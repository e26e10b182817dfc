#pragma once

#include <boost/test/unit_test.hpp>

#include <string>

#include "sandbox_fixture.hpp"

// A sandbox's share of its caller's inotify instances and fanotify groups (red team R8-L2,
// R9c-L3; docs/run.md "inotify: the sandbox's share"), seen from the host side.
namespace zpolicy::tests::kernel {

// A command (python3 -c) that opens inotify instances, then fanotify groups, until refused,
// and writes how many it got to `inotify` and `fanotify` in its working directory.
inline constexpr const char* kCountNotifyHandles =
    "import ctypes\n"
    "libc = ctypes.CDLL(None)\n"
    "def count(opened):\n"
    "    n = 0\n"
    "    while n < 100000 and opened() >= 0: n += 1\n"
    "    return n\n"
    "open('inotify', 'w').write(str(count(lambda: libc.inotify_init1(0))))\n"
    "FAN_REPORT_FID = 0x200\n"
    "open('fanotify', 'w').write(str(count(lambda: libc.fanotify_init(FAN_REPORT_FID, 0))))\n";

// What kCountNotifyHandles got in `box`'s workspace: a few of each (an editor's watcher, a
// test runner's), and no more than a quarter of the caller's limit.
inline void check_notify_share(const Sandbox& box) {
  const struct {
    const char* file;
    const char* limit;
  } kinds[] = {{"inotify", "/proc/sys/fs/inotify/max_user_instances"},
               {"fanotify", "/proc/sys/fs/fanotify/max_user_groups"}};
  for (const auto& k : kinds) {
    const int got = std::stoi(read_file(box.ws(k.file)).value_or("0"));
    const int limit = std::stoi(read_file(k.limit).value_or("0"));
    BOOST_TEST(got >= 8, "the sandbox got " << got << " " << k.file << " handles");
    BOOST_TEST(got <= limit / 4, "the sandbox got " << got << " " << k.file << " handles of " << limit);
  }
}

}  // namespace zpolicy::tests::kernel
