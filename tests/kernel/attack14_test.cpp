#include <sys/syscall.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "sandbox_fixture.hpp"

// Red team round 14 (docs/redteam-2026-12.md): the looks A13C-1 and A13D-1 added, attacked.
// Each case is a finding's reproduction or another member of its class, refused since the
// sandbox's own mount table is judged once bwrap blocks (A14-1) and a mount's identity
// includes its type, source and superblock options (A14-2).
namespace zpolicy::tests::kernel {

namespace {

// bwrap's init's first mount(2), `mount(NULL, "/", NULL, MS_SLAVE|MS_REC|MS_SILENT, NULL)`:
// zpolicy's looks at the guard's namespace run when bwrap reports the init's pid, before
// the init starts its mounts; the workspace's recursive bind comes after this call.
const HeldCall kInitFirstMount{"mount", SYS_mount, "0x0 0x[0-9a-f]* 0x0 0x8c000 "};
// host_acts_while_held's argv with the first `call` held 1 s, not 0.3 s: on a loaded
// machine the host's act sometimes came after the hold there (after bwrap's binds, or
// after the guard's unshare: then nothing reached the sandbox, and the run rightly went
// ahead). A14-1's rename waits 0.3 s into the hold, so that it lands after the runner's
// looks.
std::vector<std::string> held_longer(std::vector<std::string> argv, const HeldCall& call) {
  const std::string held = "inject=" + call.syscall + ":delay_enter=300000:when=1";
  const auto at = std::find(argv.begin(), argv.end(), held);
  if (at == argv.end()) throw std::logic_error("host_acts_while_held holds otherwise: " + held);
  *at = "inject=" + call.syscall + ":delay_enter=1000000:when=1";
  return argv;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack14)

// A14-1: the lints judged again on the guard's table (A13-2) and A13C-1's look
// name the mounts below a writable root by where they are when the run looks; bwrap binds
// the workspace recursively later, with whatever mounts lie below it then. A directory
// holding a bind of the home, outside every writable root (made before the run), moved
// into the workspace by the host after the looks and before the init's mounts: the sandbox
// appended to ~/.bashrc (exit 0), root and nobody. Now the sandbox's own table, read once
// bwrap blocks, shows the bind at a point nothing verified: refused (125).
BOOST_AUTO_TEST_CASE(a_host_mount_moved_into_the_workspace_after_the_looks_is_refused) {
  for (const Caller caller : kCallers) {
    Sandbox box(caller);
    const std::string outside = box.base() + "/outside";
    box.make_dir(outside + "/h");
    box.write_file(box.home() + "/.bashrc", "echo hi\n");
    RunSpec spec;
    spec.root_prefix =
        held_longer(host_acts_while_held(kInitFirstMount, "sleep 0.3; mv \"$3\" \"$2/outside\"",
                                         {box.home(), box.workspace(), outside},
                                         "mount --bind \"$1\" \"$3/h\""),
                    kInitFirstMount);
    spec.command = {"/bin/sh", "-c", ": > started; echo planted >> outside/h/.bashrc"};
    const RunResult r = box.run(spec);
    BOOST_TEST(read_file(box.home() + "/.bashrc").value_or("").find("planted") == std::string::npos,
               "written through the bind: " << r.describe());
    BOOST_TEST((r.exit_code == 3 || r.exit_code == 125), r.describe());
    BOOST_TEST(!exists(box.ws("started")), "the command ran: " << r.describe());
  }
}

// A14-2: same_layout and A13C-1's look take a mount for the one resolution saw
// when its point, device and root agree, but an anonymous device number (tmpfs, procfs,
// sysfs, ...) is given again as soon as it is free. A 0755 tmpfs in the workspace (there
// before the run, judged harmless) unmounted by the host while the guard's unshare is held
// and a procfs mounted there gets the same device: the layouts agree, nothing is judged
// again, and the sandbox saw the host's processes (as root the host's core_pattern opened
// for writing); ZP017 refuses the same procfs mounted before the run. (Probabilistic: another
// mount on the host between the umount and the mount may take the number; then the
// layouts differ and the run is refused as it should be.) Now the types differ: refused.
BOOST_AUTO_TEST_CASE(a_mount_replaced_by_another_filesystem_with_the_same_device_is_refused) {
  for (const Caller caller : kCallers) {
    Sandbox box(caller);
    box.make_dir(box.ws("t"));
    RunSpec spec;
    spec.root_prefix = held_longer(
        host_acts_while_held(kGuardUnshare, "umount \"$1/t\" && mount -t proc proc \"$1/t\"",
                             {box.workspace()}, "mount -t tmpfs -o mode=0755 none \"$1/t\""),
        kGuardUnshare);
    spec.command = {"/bin/sh", "-c", ": > started; test -e t/1/cmdline && : > saw-host-processes"};
    const RunResult r = box.run(spec);
    BOOST_TEST(!exists(box.ws("saw-host-processes")), "the host's /proc: " << r.describe());
    BOOST_TEST((r.exit_code == 3 || r.exit_code == 125), r.describe());
    BOOST_TEST(!exists(box.ws("started")), "the command ran: " << r.describe());
  }
}

// A14-1's class, into a pin: a directory holding a bind of a world-writable (1777)
// directory outside the workspace (ZP013 refuses one there before the run), moved into
// `data` (the pin above the protected data/agent-sessions, bound onto itself after the
// workspace) after the looks: the sandbox would write into the shared directory.
BOOST_AUTO_TEST_CASE(a_shared_directory_moved_into_a_pin_after_the_looks_is_refused) {
  for (const Caller caller : kCallers) {
    Sandbox box(caller);
    const std::string shared = box.base() + "/shared", outside = box.base() + "/outside";
    box.make_dir(box.ws("data/agent-sessions"));
    box.make_dir(outside + "/s");
    RunSpec spec;
    spec.root_prefix = held_longer(
        host_acts_while_held(kInitFirstMount, "sleep 0.3; mv \"$3\" \"$2/data/outside\"",
                             {shared, box.workspace(), outside},
                             "mkdir -m 1777 \"$1\" && mount --bind \"$1\" \"$3/s\""),
        kInitFirstMount);
    spec.command = {"/bin/sh", "-c", ": > started; echo planted > data/outside/s/planted"};
    const RunResult r = box.run(spec);
    BOOST_TEST(!exists(shared + "/planted"), "written into the shared directory: " << r.describe());
    BOOST_TEST((r.exit_code == 3 || r.exit_code == 125), r.describe());
    BOOST_TEST(!exists(box.ws("started")), "the command ran: " << r.describe());
  }
}

// A14-2's class, the same type: a 0755 tmpfs replaced, while the guard's unshare is held,
// by a tmpfs of mode 1777 (a shared directory, ZP013) on the same anonymous device. Only
// the superblock's options tell them apart.
BOOST_AUTO_TEST_CASE(a_tmpfs_replaced_by_one_of_other_options_on_the_same_device_is_refused) {
  for (const Caller caller : kCallers) {
    Sandbox box(caller);
    box.make_dir(box.ws("t"));
    RunSpec spec;
    spec.root_prefix = held_longer(
        host_acts_while_held(kGuardUnshare,
                             "umount \"$1/t\" && mount -t tmpfs -o mode=1777 none \"$1/t\"",
                             {box.workspace()}, "mount -t tmpfs -o mode=0755 none \"$1/t\""),
        kGuardUnshare);
    spec.command = {"/bin/sh", "-c", ": > started; test -k t && : > saw-shared"};
    const RunResult r = box.run(spec);
    BOOST_TEST(!exists(box.ws("saw-shared")), "the shared tmpfs: " << r.describe());
    BOOST_TEST((r.exit_code == 3 || r.exit_code == 125), r.describe());
    BOOST_TEST(!exists(box.ws("started")), "the command ran: " << r.describe());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
