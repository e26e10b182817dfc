#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <string>

#include "sandbox_fixture.hpp"

// Red team attack 28c (docs/redteam-2026-12.md "Attack 28c"): host state a sandbox changes
// or holds beyond its run, and the network. Each case runs as root and as uid 65534 and is
// judged from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

namespace {

// An ext4 image with the `encrypt` feature, as a host that uses fscrypt (an encrypted home
// directory, Android, ChromeOS) has its filesystems.
std::string encryptable_image(const Sandbox& box) {
  BOOST_REQUIRE_MESSAGE(
      access("/usr/sbin/mkfs.ext4", X_OK) == 0 && access("/dev/loop-control", F_OK) == 0,
      "this test needs mkfs.ext4 and loop devices");
  const std::string image = box.base() + "/encrypt.img";
  const std::string mkfs =
      "/usr/bin/truncate -s 16M " + image + " && /usr/sbin/mkfs.ext4 -q -F -O encrypt " + image;
  BOOST_REQUIRE_MESSAGE(std::system(mkfs.c_str()) == 0, mkfs);
  return image;
}

// A RunSpec::root_prefix that mounts `image` at `fs` in a mount namespace of its own (only
// this run and its checks see it), lets the caller make `fs/home` an encrypted directory
// under the caller's own key, runs the sandbox, and then checks as the caller, on the host,
// what the sandbox left: "home: ..." and "sandbox-key: ...". Its status is zpolicy's.
std::vector<std::string> with_encrypted_home(const Sandbox& box, const std::string& image,
                                             const std::string& fs, const std::string& helper) {
  const std::string uid = std::to_string(uid_of(box.caller()));
  return in_private_mount_namespace(
      "image=$1 fs=$2 uid=$3 helper=$4; shift 4\n"
      "as() { if [ \"$uid\" = 0 ]; then \"$@\"; else /usr/bin/setpriv --reuid=\"$uid\" "
      "--regid=\"$uid\" --clear-groups -- \"$@\"; fi; }\n"
      "mount -o loop \"$image\" \"$fs\" || exit 97\n"
      "chown \"$uid:$uid\" \"$fs\" && as /usr/bin/python3 \"$helper\" setup \"$fs/home\" || exit "
      "98\n"
      "\"$@\"; status=$?\n"
      "as /usr/bin/python3 \"$helper\" check \"$fs/home\"\n"
      "exit $status\n",
      {image, fs, uid, helper});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kernel_attack28c)

// A28C-1: a filesystem's encryption keyring (fscrypt) is host kernel state reached by
// ioctl() on any file of the filesystem, a read-only one included, and not namespaced.
// On 6e762fd, in read-only mode too, the command added a key of its own to the host's
// filesystem, which stayed after the run (until the host unmounts the filesystem) and was
// charged to the caller's key quota (nobody's 200 keys filled, host keyctl then EDQUOT),
// and removed the caller's own key: the caller's encrypted home read ENOKEY on the host
// after the run. Now every change answers EOPNOTSUPP, as a filesystem without encryption
// does, and reading the state still works.
BOOST_DATA_TEST_CASE(the_sandbox_changes_no_filesystem_keyring, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string image = encryptable_image(box);
  const std::string fs = box.base() + "/fs";
  BOOST_REQUIRE(mkdir(fs.c_str(), 0755) == 0);
  const std::string helper =
      box.write_policy("fscrypt_keyring.py", source_file("tests/kernel/fscrypt_keyring.py"));
  for (const std::string mode : {"workspace-write", "read-only"}) {
    BOOST_TEST_CONTEXT(mode) {
      RunSpec spec;
      spec.options = {"--mode", mode};
      spec.command = {"/usr/bin/python3", helper, "attack", fs + "/home"};
      spec.root_prefix = with_encrypted_home(box, image, fs, helper);
      const RunResult r = box.run(spec);
      BOOST_TEST(r.exit_code == 0, r.describe());
      // What reading asks is answered: the refusals below are the filter's, not a
      // filesystem that has no encryption.
      BOOST_TEST(r.out.find("policy-read: ok\n") != std::string::npos, r.describe());
      BOOST_TEST(r.out.find("key-status-read: present\n") != std::string::npos, r.describe());
      for (const char* change : {"add", "remove", "remove-all", "salt"})
        BOOST_TEST(r.out.find(std::string(change) + ": EOPNOTSUPP\n") != std::string::npos,
                   change << " was not refused: " << r.describe());
      BOOST_TEST(r.out.find("home: home data\n") != std::string::npos,
                 "the caller's encrypted home was locked: " << r.describe());
      BOOST_TEST(r.out.find("sandbox-key: absent\n") != std::string::npos,
                 "the sandbox's key stayed on the host's filesystem: " << r.describe());
    }
  }
}

// A28C-2: under `loopback` and an allow list the filter let socket(AF_INET or AF_INET6) name
// any protocol, and for one the kernel does not have built in inet_create() asks modprobe,
// as root on the host and with no capability check, for `net-pf-2-proto-132-type-1` (SCTP;
// L2TP, SMC, DCCP likewise); the module stays loaded after the run. This kernel has no
// loadable modules, so the sign on 6e762fd is the kernel's own answer from that lookup
// (EPROTONOSUPPORT, ESOCKTNOSUPPORT); now the filter answers EPERM before the kernel looks,
// and TCP, UDP and MPTCP on the sandbox's loopback still work.
BOOST_DATA_TEST_CASE(a_sandbox_socket_names_no_protocol_the_kernel_would_load,
                     bdata::make(kCallers), caller) {
  Sandbox box(caller);
  const std::string probe =
      "import errno, socket\n"
      "def make(family, kind, protocol):\n"
      "    try:\n"
      "        socket.socket(family, kind, protocol).close()\n"
      "        return 'ok'\n"
      "    except OSError as e:\n"
      "        return errno.errorcode[e.errno]\n"
      "for name, family, kind, protocol in (('tcp', 2, 1, 0), ('tcp6', 10, 1, 6), "
      "('udp', 2, 2, 17), ('mptcp', 2, 1, 262), ('sctp', 2, 1, 132), ('sctp-seq', 2, 5, 132), "
      "('sctp6', 10, 1, 132), ('l2tp', 2, 2, 115), ('smc', 2, 1, 256), ('dccp', 2, 6, 33), "
      "('packet', 2, 10, 0)):\n"
      "    print(name + ':', make(family, kind, protocol))\n"
      "s = socket.socket()\n"
      "s.bind(('127.0.0.1', 0))\n"
      "s.listen()\n"
      "socket.create_connection(s.getsockname()).sendall(b'x')\n"
      "print('loopback:', s.accept()[0].recv(1).decode())\n";
  const std::string loopback =
      box.write_policy("loopback.yaml", "zpolicy: 1\nmode: workspace-write\nnetwork: loopback\n");
  const std::string allow = box.write_policy(
      "allow.yaml", "zpolicy: 1\nmode: workspace-write\nnetwork:\n  allow: [example.org:443]\n");
  for (const std::string& policy : {loopback, allow}) {
    BOOST_TEST_CONTEXT(policy) {
      RunSpec spec;
      spec.options = {"--policy", policy};
      spec.command = {"/usr/bin/python3", "-c", probe};
      const RunResult r = box.run(spec);
      BOOST_TEST(r.exit_code == 0, r.describe());
      for (const char* made : {"tcp", "tcp6", "udp", "mptcp"})
        BOOST_TEST(r.out.find(std::string(made) + ": ok\n") != std::string::npos,
                   made << ": " << r.describe());
      BOOST_TEST(r.out.find("loopback: x\n") != std::string::npos, r.describe());
      for (const char* refused : {"sctp", "sctp-seq", "sctp6", "l2tp", "smc", "dccp", "packet"})
        BOOST_TEST(r.out.find(std::string(refused) + ": EPERM\n") != std::string::npos,
                   refused << " was not refused by the filter: " << r.describe());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
