#pragma once

// Red team R5-K1 for any launcher of a sandbox (zpolicy run, a plan executor): bwrap
// takes end of file on --block-fd as a release, so a launcher killed while the sandbox
// waits to be released must leave bwrap nothing to run with.
#include <signal.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "process_tree.hpp"
#include "sandbox_fixture.hpp"

namespace zpolicy::tests::kernel {

// Starts `spec` and stops its launcher as soon as it has started bwrap, long before it
// could release anything (bwrap's monitor sets the sandbox up without it); kills it once
// the sandbox's init waits for the release. Then the init must end and `ran` must not
// exist. A launcher that released before it was stopped tests nothing: up to five
// attempts, `scratch` removed between them. `who` names the launcher in failures.
inline void check_killed_launcher_releases_nothing(Sandbox& box, const RunSpec& spec,
                                                   const std::string& ran,
                                                   const std::vector<std::string>& scratch,
                                                   const std::string& who) {
  bool held = false;
  for (int attempt = 0; attempt < 5 && !held; ++attempt) {
    Running r = box.start(spec);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (children_of(r.pid).empty() && std::chrono::steady_clock::now() < until) {
    }
    kill(r.pid, SIGSTOP);
    // Only once it is stopped: until then it may still release the sandbox.
    wait_until([&] { return process_state(r.pid) == 'T'; }, std::chrono::seconds(5));
    pid_t init = 0;
    wait_until([&] { return (init = sandbox_init(r.pid)) != 0; }, std::chrono::seconds(5));
    BOOST_REQUIRE_MESSAGE(init != 0, "no sandbox init appeared");
    held = wait_until([&] { return blocked_on_release(init); }, std::chrono::seconds(5));
    kill(r.pid, SIGKILL);
    box.finish(r);
    if (!held) {
      wait_until([&] { return gone_or_zombie(init); }, std::chrono::seconds(5));
      for (const auto& f : scratch) unlink(f.c_str());
      continue;
    }
    const bool init_ended = wait_until([&] { return gone_or_zombie(init); }, std::chrono::seconds(3));
    if (!init_ended) kill(init, SIGKILL);  // the escaped sandbox, so the test leaves nothing
    BOOST_CHECK_MESSAGE(init_ended, "the sandbox outlived " + who);
    BOOST_CHECK_MESSAGE(!exists(ran), "the command ran without the setup check");
  }
  BOOST_CHECK_MESSAGE(held, who + " released every sandbox before it could be stopped");
}

}  // namespace zpolicy::tests::kernel
