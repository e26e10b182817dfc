#include <sys/stat.h>
#include <sys/xattr.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "sandbox_fixture.hpp"

// Invariant 6 (red team 2026-12, E0 and E6): what the sandbox leaves behind carries no
// setuid or setgid bit and no file capability, whoever started it, and the ptrace deny
// has no side door through pidfd_getfd or /proc/PID/mem. Every check is a stat from the
// host after the run.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;
namespace fs = std::filesystem;
namespace {

// Each line tries one member of the class; its failure is expected and ignored, the
// host's stat decides.
const char* kSetidAttempts = R"(umask 022
cp /bin/dash chmod-u && chmod 4755 chmod-u
cp /bin/dash chmod-g && chmod 2755 chmod-g
cp /bin/dash chmod-us && chmod u+s chmod-us
cp /bin/dash chmod-gs && chmod g+s chmod-gs
install -m 6755 /bin/dash install-ug
mkdir -m 2755 mkdir-g
mkdir dir-gs && chmod g+s dir-gs
/usr/bin/python3 - <<'PY'
import os, stat, tarfile, io
def attempt(name, fn):
    try:
        fn()
        print(name, "ok", flush=True)
    except OSError as e:
        print(name, e, flush=True)
attempt("os.open", lambda: os.close(os.open("open-u", os.O_CREAT | os.O_WRONLY, 0o4755)))
attempt("os.open excl", lambda: os.close(os.open("open-g", os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o2755)))
def fchmod():
    fd = os.open("fchmod-u", os.O_CREAT | os.O_WRONLY, 0o755)
    try:
        os.fchmod(fd, 0o4755)
    finally:
        os.close(fd)
attempt("os.fchmod", fchmod)
def fchmodat():
    open("chmodat-g", "w").close()
    os.chmod("chmodat-g", 0o2755, dir_fd=os.open(".", os.O_RDONLY))
attempt("os.chmod dir_fd", fchmodat)
attempt("os.mknod", lambda: os.mknod("mknod-u", stat.S_IFREG | 0o6755))
attempt("os.mkdir", lambda: os.mkdir("pymkdir-g", 0o2755))
def tmpfile():
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o4755)
    os.link("/proc/self/fd/%d" % fd, "tmpfile-u")
attempt("O_TMPFILE", tmpfile)
def tar():
    data = b"#!/bin/sh\n"
    with tarfile.open("setid.tar", "w") as t:
        for name, mode in (("tar-u", 0o4755), ("tar-g", 0o2755)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            t.addfile(info, io.BytesIO(data))
attempt("tar", tar)
PY
tar -xpf setid.tar
cp -p /bin/dash cp-p-ref 2>/dev/null
for f in /usr/bin/passwd /usr/bin/su /usr/bin/mount /bin/su; do ln "$f" link-$(basename "$f"); done
ls -la
)";

std::vector<std::string> setid_files(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    struct stat st;
    if (::lstat(e.path().c_str(), &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)) != 0)
      out.push_back(e.path().string() + " mode " + std::to_string(st.st_mode & 07777) + " uid " +
                    std::to_string(st.st_uid));
  }
  return out;
}

// A parent tries a sibling's memory through /proc/PID/mem (write, then read) and takes
// one of its descriptors with pidfd_getfd; kcmp and process_madvise are probed too. The
// child prints its buffer afterwards.
const char* kSiblingProgram = R"(import ctypes, os, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
buf = ctypes.create_string_buffer(b"original", 16)
r, w = os.pipe()
child = os.fork()
if child == 0:
    os.close(w)
    os.read(r, 1)
    print("child buffer", buf.value.decode(), flush=True)
    os._exit(0)
os.close(r)
for how in ("r+b", "rb"):
    try:
        with open("/proc/%d/mem" % child, how, buffering=0) as mem:
            mem.seek(ctypes.addressof(buf))
            if how == "r+b":
                mem.write(b"TAMPERED")
            else:
                mem.read(8)
        print("proc_mem", how, "succeeded", flush=True)
    except OSError as e:
        print("proc_mem", how, errno.errorcode[e.errno], flush=True)
def sc(name, *a):
    rc = libc.syscall(*a)
    print(name, "succeeded" if rc >= 0 else errno.errorcode[ctypes.get_errno()], flush=True)
pidfd = libc.syscall(434, child, 0)
sc("pidfd_getfd", 438, pidfd, 0, 0)
sc("process_madvise", 440, pidfd, 0, 0, 0, 0)
sc("kcmp", 312, os.getpid(), child, 0, 0, 0)
os.write(w, b"x")
os.waitpid(child, 0)
)";

mode_t file_mode_of(const std::string& path) {
  struct stat st;
  BOOST_TEST_REQUIRE(::lstat(path.c_str(), &st) == 0, path);
  return st.st_mode & 07777;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(setuid)

BOOST_DATA_TEST_CASE(the_sandbox_leaves_no_setuid_or_setgid_file, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  auto r = box.sh(kSetidAttempts);
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  // The attempts ran: files they created without the bit are there.
  BOOST_TEST(fs::exists(box.ws("chmod-u")), r.describe());
  BOOST_TEST(fs::exists(box.ws("fchmod-u")), r.describe());
  const auto found = setid_files(box.workspace());
  std::string list;
  for (const auto& f : found) list += f + "\n";
  BOOST_TEST(found.empty(), list << r.describe());
}

// A file capability is a setuid bit by another name. Setting one needs CAP_SETFCAP,
// which the sandbox never holds; the filter cannot read setxattr's name, so this guard
// is all that holds it.
BOOST_DATA_TEST_CASE(no_file_capability_and_no_chown_from_inside, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws("f"), "x", 0755);
  auto r = box.sh(
      "/usr/bin/python3 -c \"import os\n"
      "cap = bytes([0,0,0,2, 0,0x20,0,0, 0,0,0,0, 0,0,0,0, 0,0,0,0])\n"
      "for fn in (lambda: os.setxattr('f', 'security.capability', cap), lambda: os.chown('f', 1, "
      "1)):\n"
      "    try: fn(); print('ok')\n"
      "    except OSError as e: print(e)\"");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  char buf[64];
  BOOST_TEST(::lgetxattr(box.ws("f").c_str(), "security.capability", buf, sizeof buf) < 0,
             r.describe());
  struct stat st;
  BOOST_TEST_REQUIRE(::lstat(box.ws("f").c_str(), &st) == 0);
  BOOST_TEST(st.st_uid == uid_of(caller), r.describe());
}

// Positive controls: ordinary modes still work, as do the tools that set them.
BOOST_DATA_TEST_CASE(ordinary_modes_still_work, bdata::make(kCallers), caller) {
  Sandbox box(caller);
  box.write_file(box.ws("plain"), "x", 0640);
  auto r = box.sh(
      "set -e\n"
      "umask 022; touch a; chmod 755 a\n"
      "touch b; chmod +x b\n"
      "(umask 077; touch c)\n"
      "cp -p plain plain-copy\n"
      "mkdir -m 750 d\n"
      "chmod 1755 d\n"
      "/usr/bin/python3 -c \"import tarfile, io\n"
      "with tarfile.open('ok.tar', 'w') as t:\n"
      "    i = tarfile.TarInfo('tarred'); i.size = 1; i.mode = 0o751; t.addfile(i, "
      "io.BytesIO(b'x'))\"\n"
      "mkdir x && tar -xpf ok.tar -C x\n"
      "/usr/bin/python3 -c \"import os; os.close(os.open('o', os.O_CREAT | os.O_WRONLY, "
      "0o700))\"\n");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(file_mode_of(box.ws("a")) == 0755u, r.describe());
  BOOST_TEST(file_mode_of(box.ws("b")) == 0755u, r.describe());
  BOOST_TEST(file_mode_of(box.ws("c")) == 0600u, r.describe());
  BOOST_TEST(file_mode_of(box.ws("plain-copy")) == 0640u, r.describe());
  // The sticky bit; not with write for others, which A27B-1's rule refuses (attack27b).
  BOOST_TEST(file_mode_of(box.ws("d")) == 01755u, r.describe());
  BOOST_TEST(file_mode_of(box.ws("x/tarred")) == 0751u, r.describe());
  BOOST_TEST(file_mode_of(box.ws("o")) == 0700u, r.describe());
}

// E6: the calls that give part of ptrace's power are refused like ptrace; /proc is
// read-only, so /proc/PID/mem cannot be written. Reading it still works between
// processes of the same run (same uid, no Yama on the test host): a known limit,
// docs/seccomp.md, not asserted either way.
BOOST_DATA_TEST_CASE(pidfd_getfd_and_proc_mem_do_not_bypass_the_ptrace_deny, bdata::make(kCallers),
                     caller) {
  Sandbox box(caller);
  box.write_file(box.ws("sibling.py"), kSiblingProgram);
  auto r = box.sh("/usr/bin/python3 sibling.py");
  BOOST_TEST_REQUIRE(r.completed(), r.describe());
  BOOST_TEST(r.out.find("child buffer original") != std::string::npos, r.describe());
  BOOST_TEST(r.out.find("proc_mem r+b succeeded") == std::string::npos, r.describe());
  for (const char* call : {"pidfd_getfd EPERM", "process_madvise EPERM", "kcmp EPERM"})
    BOOST_TEST(r.out.find(call) != std::string::npos, call << "\n" << r.describe());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
