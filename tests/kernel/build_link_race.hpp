#pragma once

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <map>
#include <set>
#include <string>

#include "attack_steps.hpp"
#include "sandbox_fixture.hpp"

namespace zpolicy::tests::kernel {

// The race of N20-1 and A21-1: a run under the default policy keeps swapping the
// workspace's `build` (with `build/out` in it) and a link to BASE/victim (holding
// `out/file`), as an earlier run's command racing the resolution of later runs. Meanwhile
// `spec` runs `runs` times: each must end with one of `allowed` and leave the victim
// unchanged, whichever state of `build` its resolution met.
inline void race_build_link(const Sandbox& box, const RunSpec& spec, int runs,
                            const std::set<int>& allowed) {
  const Victim victim(box);
  box.make_dir(box.ws("build/out"));

  RunSpec flipper;
  flipper.limit = std::chrono::seconds(60);
  flipper.command = {"/usr/bin/python3", "-c",
                     "import os, time\n"
                     "os.symlink('" +
                         victim.dir +
                         "', 'build.l')\n"
                         "open('flipping', 'w').close()\n"
                         "end = time.time() + 40\n"
                         "def mv(a, b):\n"
                         "  try: os.rename(a, b)\n"
                         "  except OSError: pass\n"
                         "while time.time() < end and not os.path.exists('stop'):\n"
                         "  mv('build', 'build.x'); mv('build.l', 'build'); mv('build', 'build.l'); "
                         "mv('build.x', 'build')\n"};
  Running flipping = box.start(flipper);
  BOOST_TEST_REQUIRE(wait_until([&] { return exists(box.ws("flipping")); }, std::chrono::seconds(15)));

  std::map<int, int> outcomes;
  for (int i = 0; i < runs; ++i) {
    const RunResult r = box.run(spec);
    ++outcomes[r.exit_code];
    BOOST_TEST(allowed.contains(r.exit_code), r.describe());
    BOOST_TEST_REQUIRE(victim.unchanged(), r.describe());
  }
  box.write_file(box.ws("stop"), "");
  box.finish(flipping);
  std::string seen;
  for (const auto& [code, n] : outcomes)
    seen += " exit " + std::to_string(code) + " x" + std::to_string(n);
  BOOST_TEST_MESSAGE("outcomes:" << seen);
  BOOST_TEST(victim.file() == "orig\n", seen);
}

}  // namespace zpolicy::tests::kernel
