#!/usr/bin/env python3
"""Executes a `zpolicy plan --format json` document without zpolicy: an independent,
minimal executor (Linux, bwrap or unconfined plans), written from docs/embedding.md
"The run plan" alone. The kernel tests run it to show that the plan holds everything a
sandboxed run needs.

usage: run_plan.py PLAN.json     exits with the command's status, 124 on the plan's
                                 timeout, 125 when it refuses to start, 148 when ^Z ended it

What `zpolicy run` does about the terminal and the caller's streams (docs/run.md "The
terminal"), this executor does as follows (red team R18-3..5):
* ^Z (SIGTSTP) ends the run: the sandbox is killed, exit 148. bwrap's --new-session keeps
  the command out of the terminal's process groups, so the default stop would stop this
  process alone while the command ran on, unsupervised, past its timeout, reading what is
  typed to the shell (R18-3). Stopping a whole pid namespace without missing a process
  (forking ones, threads whose main thread exited, a vfork parent waiting in 'D': A19-7,
  A20-1) is what runner/supervise.cpp does; this minimal executor does not try it, and
  ends the run instead, as a sandbox zpolicy cannot stop is ended.
* A terminal among descriptors 0-2 is refused when this process is in the background of
  it (`&`), and one that is not this process's controlling terminal but another session's
  (`setsid`, `< /dev/pts/N`; a pseudo-terminal no session holds, a harness's, passes) is
  refused too: the sandbox, outside the terminal's session,
  would read what is typed to the shell (R18-4, A19-1, A20-5). `zpolicy run` hands such a
  run /dev/null and copies its output instead. A run sent to the background later (only
  SIGSTOP and `bg` can, since ^Z ends it) is ended once seen there, exit 125.
* The status flags the command sets on 0-2 with F_SETFL (O_NONBLOCK, O_APPEND on the
  caller's own pipe) are put back after the run, as the terminal's settings are (R18-5)."""
import base64
import ctypes
import errno
import fcntl
import functools
import json
import os
import select
import signal
import socket
import stat
import struct
import sys
import termios
import threading
import time


def show(path):
    return path.decode("utf-8", "replace")


def refuse(why):
    restore_terminals()
    print(f"run_plan.py: {why}; nothing ran", file=sys.stderr)
    sys.exit(125)


def raw(value):
    """A plan string: JSON text, or {"base64": ...} for bytes that are not UTF-8."""
    if isinstance(value, dict):
        return base64.b64decode(value["base64"], validate=True)
    return value.encode("utf-8")


def relay(src, dst):
    """Copies the pipe `src` into `dst` until every writer has closed it."""
    while chunk := os.read(src, 65536):
        view = memoryview(chunk)
        while view:
            view = view[os.write(dst, view):]
    os.close(src)


# /dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom: devices that name nothing of
# the host (not /dev/mem, /dev/kmsg or a disk).
MEMORY_DEVICES = {(1, 3), (1, 5), (1, 7), (1, 8), (1, 9)}
# At most this much of a file on stdin is held in memory; a larger rest goes through a pipe.
COPY_LIMIT = 16 << 20
TIOCGPTN = getattr(termios, "TIOCGPTN", 0x80045430)


def reaches_only_its_peer(fd, st):
    """Whether descriptor `fd` may pass as it is: it has no name on a host mount, and it
    reaches nothing but its other end (red team R7-D1, R8-D2, R8-D4)."""
    if stat.S_ISSOCK(st.st_mode):
        # A datagram socket takes an address with every sendmsg (seccomp cannot see it), a
        # listening one accepts host connections, an unconnected stream socket connects
        # through sendmsg's MSG_FASTOPEN: only a connected stream socket passes. And only
        # a unix one: a TCP socket drops its connection on a connect() to AF_UNSPEC and
        # connects again anywhere in the host's network, which `network: loopback` lets
        # the filter through (red team A26B-1). `run` passes TCP under `none`, whose filter
        # denies connect(); the plan does not say which network the filter has.
        s = socket.socket(fileno=fd)
        try:
            s.getpeername()
            return (s.family == socket.AF_UNIX and
                    s.type in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET) and
                    not s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))
        except OSError:
            return False
        finally:
            s.detach()
    if stat.S_ISCHR(st.st_mode):
        if os.isatty(fd):
            try:  # a pseudo-terminal's master: writing to it types into the other side
                fcntl.ioctl(fd, TIOCGPTN, b"\0" * 4)
                return False
            except OSError:
                return True
        return (os.major(st.st_rdev), os.minor(st.st_rdev)) in MEMORY_DEVICES
    if stat.S_ISFIFO(st.st_mode):  # an anonymous pipe; a named FIFO lives on a host mount
        return os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
    return False


def feed(copy, src, dst):
    """Writes the memfd `copy`, then the rest of `src`, into the pipe `dst`; a command that
    stops reading ends it."""
    try:
        for source in (copy, src):
            while chunk := os.read(source, 65536):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(dst, view):]
    except BrokenPipeError:
        pass
    os.close(copy)
    os.close(dst)


def sandbox_stdio():
    """Descriptors 0-2 as the sandbox may hold them (red team R7-D1, R8-D1..D4). An open
    file keeps the host's mount, and /proc/self/fd/N leads back to it: a file given
    read-only on stdin could be opened again for writing, a directory walked. What has no
    such name and reaches only its other end passes as it is (reaches_only_its_peer); a
    regular file on stdin becomes a sealed memfd copy of what is left to read (up to
    COPY_LIMIT, a larger rest through a pipe), one on stdout or stderr a pipe this process
    copies into it; anything else is refused. Returns (payloads, relay threads)."""
    payloads, relays = [], []
    for fd in (0, 1, 2):
        try:
            st = os.fstat(fd)
        except OSError:
            continue  # closed: main() opened /dev/null on it, so it cannot be
        if reaches_only_its_peer(fd, st):
            continue
        if not stat.S_ISREG(st.st_mode):
            refuse(f"descriptor {fd} is a directory, a device, a named FIFO, a socket that is "
                   "not a connected unix stream or a pseudo-terminal's master: the sandbox could "
                   "reach the host through it")
        if fd == 0:
            copy = os.memfd_create("stdin", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
            held = 0
            while held <= COPY_LIMIT and (chunk := os.read(0, 65536)):
                os.write(copy, chunk)
                held += len(chunk)
            os.lseek(copy, 0, os.SEEK_SET)
            if held <= COPY_LIMIT:
                fcntl.fcntl(copy, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW |
                            fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL)
                payloads.append((copy, 0))
            else:
                r, w = os.pipe2(os.O_CLOEXEC)
                payloads.append((r, 0))
                relays.append(threading.Thread(target=feed, args=(copy, 0, w), daemon=True))
        else:
            r, w = os.pipe2(os.O_CLOEXEC)
            payloads.append((w, fd))
            relays.append(threading.Thread(target=relay, args=(r, fd), daemon=True))
    return payloads, relays


def make_placeholders(placeholders):
    """Each path made to exist as a directory, walking from its writable root without
    following a symlink; returns the directories created, each with a descriptor held on it
    until it is removed after the run."""
    created = []
    for p in placeholders:
        root, path = raw(p["root"]), raw(p["path"])
        if path != root and not path.startswith(root.rstrip(b"/") + b"/"):
            refuse(f"placeholder {path!r} is not under its root {root!r}")
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        cur = root.rstrip(b"/")
        for comp in [c for c in path[len(root):].split(b"/") if c]:
            cur += b"/" + comp
            try:
                os.mkdir(comp, 0o755, dir_fd=fd)
                made = True
            except FileExistsError:
                made = False
            try:
                nxt = os.open(comp, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as e:
                os.close(fd)
                remove_placeholders(created)
                refuse(f"placeholder {cur!r} is not a directory ({e.strerror})")
            if made:
                created.append((cur, os.dup(nxt)))
            os.close(fd)
            fd = nxt
        os.close(fd)
    return created


HOST_RUN_LOCK = "/dev/zpolicy/runs.lock"
host_run_lock = None  # its descriptor, held shared from before the placeholders are made


def only_root_writes(st):
    return st.st_uid == 0 and st.st_mode & 0o022 == 0


def take_host_run_lock():
    """The host run lock (runner/host_run_lock.hpp), held shared for the run's life, so that
    a `zpolicy run` ending alone, reconciling a dead run, or `zpolicy cleanup` never takes
    the host for quiet while this run relies on a placeholder (red team A10B-1). Missing or
    not a file only root writes: this run is uncoordinated, and leaves its placeholders."""
    global host_run_lock
    try:
        fd = os.open(HOST_RUN_LOCK, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    st = os.fstat(fd)
    if not (stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and only_root_writes(st) and
            only_root_writes(os.stat(os.path.dirname(HOST_RUN_LOCK), follow_symlinks=False))):
        os.close(fd)
        return
    # A run holds it exclusively only for the moment of its cleanup.
    for _ in range(500):
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            host_run_lock = fd
            return
        except BlockingIOError:
            time.sleep(0.01)
    refuse(f"'{HOST_RUN_LOCK}' has been held exclusively for 5 s")


def alone_on_the_host():
    """Whether no other run of any user may rely on a placeholder: the host run lock taken
    exclusively, still the inode its name names. Kept exclusive while the caller removes."""
    if host_run_lock is None:
        return False
    fcntl.flock(host_run_lock, fcntl.LOCK_UN)
    try:
        fcntl.flock(host_run_lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        now, mine = os.stat(HOST_RUN_LOCK, follow_symlinks=False), os.fstat(host_run_lock)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino)


def remove_placeholders(created):
    """Deepest first, each only if its name still gives the directory made: the descriptor
    held on it keeps its inode, and so its number, from being handed to another directory
    made at that path since (ext4 reuses a freed number at once). Only when no other run is
    live: another's sandbox may have bound one (removing a mount point detaches the mount
    in every other mount namespace), so otherwise they stay, empty directories."""
    global host_run_lock
    alone = bool(created) and alone_on_the_host()
    for path, held in reversed(created):
        if not alone:
            os.close(held)
            continue
        try:
            parent = open_no_symlinks(os.path.dirname(path))
            try:
                now = os.stat(os.path.basename(path), dir_fd=parent, follow_symlinks=False)
                mine = os.fstat(held)
                if (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
                    # Only if still empty: never what the command put there.
                    os.rmdir(os.path.basename(path), dir_fd=parent)
            finally:
                os.close(parent)
        except OSError:
            pass
        os.close(held)
    created.clear()
    if alone:  # the removals are done: never stall other runs for the rest of the exit
        os.close(host_run_lock)
        host_run_lock = None


def open_no_symlinks(path):
    """O_PATH descriptor of `path`, walked from / without following any symlink."""
    fd = os.open("/", os.O_PATH | os.O_DIRECTORY)
    names = [n for n in path.split(b"/") if n]
    try:
        for i, name in enumerate(names):
            last = i == len(names) - 1
            flags = os.O_PATH | os.O_NOFOLLOW | (0 if last else os.O_DIRECTORY)
            nxt = os.open(name, flags, dir_fd=fd)
            os.close(fd)
            fd = nxt
        if stat.S_ISLNK(os.fstat(fd).st_mode):
            raise OSError(f"{path!r} is a symlink")
        return fd
    except OSError:
        os.close(fd)
        raise


def open_binds(binds, placeholders, created):
    """The bind sources, each the very object the plan names, on its descriptor number."""
    made = {raw(p["path"]) for p in placeholders}
    out = []
    for b in binds:
        path = raw(b["path"])
        try:
            fd = open_no_symlinks(path)
        except OSError as e:
            remove_placeholders(created)
            refuse(f"bind source {path!r} cannot be opened without following a symlink ({e})")
        st = os.fstat(fd)
        if path == b"/dev/null":
            ok = stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
        elif b["dev"] is not None:
            ok = (st.st_dev, st.st_ino) == (b["dev"], b["ino"])
        else:
            ok = path in made and stat.S_ISDIR(st.st_mode)
        if not ok:
            remove_placeholders(created)
            refuse(f"bind source {path!r} is not the object that was verified")
        out.append((fd, b["fd"]))
    return out


# inotify(7): what detaches a protection from its name (a removal, a rename away or over
# it), and what brings a deny root nothing masks into being (a creation, a rename onto it).
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_Q_OVERFLOW, IN_ONLYDIR, IN_DONT_FOLLOW, IN_MASK_ADD = 0x4000, 0x1000000, 0x2000000, 0x20000000
WATCHED_EVENTS = {"replaced": IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO,
                  "created": IN_CREATE | IN_MOVED_TO}


def entries_on_the_way(path):
    """Every entry the kernel looks up to open `path`, symlinks followed (at most 40),
    missing ones spelled on: compiler::HostLookups::entries_on_the_way."""
    todo, cur, links, out = [c for c in path.split(b"/") if c], b"/", 0, []
    while todo:
        c = todo.pop(0)
        if c == b".":
            continue
        if c == b"..":
            cur = cur[:max(cur.rfind(b"/"), 1)]
            continue
        entry = cur + c if cur == b"/" else cur + b"/" + c
        out.append(entry)
        if os.path.islink(entry):
            try:
                target = os.readlink(entry)
            except OSError:
                target = b""
            if target:
                links += 1
            if target and links <= 40:
                todo[:0] = [t for t in target.split(b"/") if t]
                if target.startswith(b"/"):
                    cur = b"/"
                continue
        cur = entry
    return out


def deny_way(protects):
    """The watches runner::missing_deny_names() places for the missing deny root
    `protects`: each existing entry on its way for its replacement, the first missing one
    for its creation when its parent is a directory."""
    for entry in entries_on_the_way(protects):
        parent = entry[:entry.rfind(b"/")] or b"/"
        name = entry[entry.rfind(b"/") + 1:]
        if os.path.lexists(entry):
            yield parent, name, "replaced"
            continue
        if os.path.isdir(parent) and not os.path.islink(parent):
            yield parent, name, "created"
        return


class HostNameWatch:
    """The plan's `watches`: the host names whose change while the sandbox runs undoes a
    protection (docs/run.md "Protected names replaced on the host", red team R7-C1, R8-H1)."""

    def __init__(self, watches, missing_deny_roots, created):
        self.fd, self.watches = None, []
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK) if watches else None
        if self.fd is not None and self.fd < 0:
            self.fail(created, "cannot watch the protected names on the host: " +
                      os.strerror(ctypes.get_errno()))
        for w in watches:
            if w["on"] not in WATCHED_EVENTS:
                self.fail(created, f"unknown watch kind {w['on']!r}")
            directory, name = raw(w["directory"]), raw(w["name"])
            wd = libc.inotify_add_watch(self.fd, directory, WATCHED_EVENTS[w["on"]] | IN_MASK_ADD |
                                        IN_ONLYDIR | IN_DONT_FOLLOW)
            if wd < 0:
                self.fail(created, f"cannot watch {directory!r} for the protection of "
                                   f"{w['protects']!r}: {os.strerror(ctypes.get_errno())}")
            self.watches.append((wd, directory, name, w))
        # A name created before its watch was in place raised no event: look now.
        for _, directory, name, w in self.watches:
            if w["on"] == "created" and os.path.lexists(os.path.join(directory, name)):
                self.fail(created, f"deny root '{show(raw(w['protects']))}' was created on the "
                                   "host after the plan was made, and nothing would mask it")
        # Every deny root missing when the plan was made, whether a "created" watch names it
        # or not (below a file nothing can be created, so only "replaced" watches lie on its
        # way, and a watch shared by two deny roots names one of them): it must still resolve
        # to nothing (a symlink on its way re-pointed since the plan, red team A17B-2), and
        # its way, walked now that any later change trips the watch, must be the way the
        # plan watches (a symlink on it re-pointed or replaced, red team A9E-1).
        watched = {(raw(w["directory"]), raw(w["name"]), w["on"]) for w in watches}
        for protects in missing_deny_roots:
            if os.path.exists(protects):
                self.fail(created, f"deny root '{show(protects)}' was created on the host after "
                                   "the plan was made, and nothing would mask it")
            for way in deny_way(protects):
                if way not in watched:
                    self.fail(created, f"the way to deny root '{show(protects)}' changed on the "
                                       "host after the plan was made")

    def fail(self, created, why):
        remove_placeholders(created)
        refuse(why)

    def undone(self):
        """What the host did that undid a protection since the last call, or None."""
        if self.fd is None:
            return None
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return None
        at = 0
        while at < len(data):
            wd, mask, _, length = struct.unpack_from("iIII", data, at)
            name = data[at + 16:at + 16 + length].rstrip(b"\0")
            at += 16 + length
            if mask & IN_Q_OVERFLOW:
                return "the kernel dropped events that might have undone a protection"
            for w_wd, directory, w_name, w in self.watches:
                if wd == w_wd and name == w_name and mask & WATCHED_EVENTS[w["on"]]:
                    path = os.path.join(directory, name).decode("utf-8", "replace")
                    if w["on"] == "created":
                        return (f"{path}, a deny root that did not exist when the plan was made, "
                                "was created on the host while the sandbox ran")
                    return f"{path} was renamed or removed on the host while the sandbox ran"
        return None


NS_GET_USERNS = 0xB701  # _IO(0xb7, 0x1), linux/nsfs.h
CLONE_NEWUSER = 0x10000000


CLONE_NEWNS = 0x00020000
MS_REC, MS_PRIVATE = 0x4000, 1 << 18


def private_mount_namespace():
    """The plan's private_mounts, in the child that execs bwrap (red team A17B-4): a mount
    namespace of its own whose mounts are private, so that nothing the host mounts during
    the run reaches the sandbox. Raises OSError if a step fails."""
    libc = ctypes.CDLL(None, use_errno=True)

    def check(result):
        if result != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))

    if libc.unshare(CLONE_NEWNS) != 0:
        if ctypes.get_errno() != errno.EPERM:
            check(-1)
        uid, gid = os.geteuid(), os.getegid()
        check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS))
        for name, text in (("uid_map", f"{uid} {uid} 1\n"), ("setgroups", "deny"),
                           ("gid_map", f"{gid} {gid} 1\n")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None))


def limit_notify(init, share):
    """The plan's notify_share, set in the user namespace that owns the sandbox init's pid
    namespace (red team R8-L2; its network namespace is the host's under `network: full`,
    A10-1): the limit a write reaches is the one of the writer's user namespace, so a
    forked child joins it (setns of a user namespace needs a single-threaded process) and
    writes. The reason it failed, or None."""
    if share is None:
        return None
    try:
        ns = os.open(f"/proc/{init}/ns/pid", os.O_RDONLY)
        try:
            user = fcntl.ioctl(ns, NS_GET_USERNS)
        finally:
            os.close(ns)
    except OSError as e:
        return f"cannot reach the sandbox's user namespace: {e.strerror}"
    if os.stat(f"/proc/self/fd/{user}").st_ino == os.stat("/proc/self/ns/user").st_ino:
        os.close(user)  # lowering these would lower the caller's own limits
        return "the sandbox has no user namespace of its own to bound its inotify and fanotify use in"
    child = os.fork()
    if child == 0:
        status = 1
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.setns(user, CLONE_NEWUSER) == 0:
                for name in ("inotify_instances", "inotify_watches", "fanotify_groups", "fanotify_marks"):
                    with open(f"/proc/sys/user/max_{name}", "w") as f:
                        f.write(str(int(share[name])))
                status = 0
        finally:
            os._exit(status)
    os.close(user)
    _, status = os.waitpid(child, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return "cannot limit the sandbox's share of the caller's inotify and fanotify limits"
    return None


class SetupUnseen(Exception):
    """Whether the sandbox finished setting up cannot be told: nothing may run."""


def wait_until_blocked(pid, block_fd):
    """Until bwrap's init `pid` sits in read(block_fd): every setup step is done and the
    command not started. False when it ended first (bwrap failed on its own); SetupUnseen
    when that cannot be told within 30 s."""
    deadline = time.monotonic() + 30
    why = "the sandbox did not finish setting up within 30 s"
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/syscall") as f:
                words = f.read().split()
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        except PermissionError as e:
            # EACCES and EPERM come and go: while bwrap changes credentials during setup the
            # kernel makes it undumpable, and bwrap makes itself dumpable again before it
            # blocks (red team R4-S1), as the runner's setup check knows. Only the state, or
            # the deadline, ends the wait.
            why = f"the sandbox's state could not be read within 30 s ({e.strerror})"
            time.sleep(0.001)
            continue
        except OSError as e:
            raise SetupUnseen(f"the sandbox's state cannot be read ({e.strerror})") from e
        if state in ("Z", "X"):
            return False
        if len(words) >= 2 and words[0] == "0" and int(words[1], 16) == block_fd:  # read
            return True
        time.sleep(0.001)
    raise SetupUnseen(why)


def mount_of(fd):
    """The id of the mount descriptor `fd` is on (/proc/self/fdinfo): a destination is a
    mount point when its mount differs from its parent's."""
    with open(f"/proc/self/fdinfo/{fd}") as f:
        mnt_id = next(int(l.split()[1]) for l in f if l.startswith("mnt_id:"))
    return mnt_id


def fs_type(pid, mnt_id):
    """The filesystem type of mount `mnt_id` in the sandbox's /proc/PID/mountinfo. Read as
    bytes: a mount point's name is the host's, not always UTF-8 (red team A17B-5)."""
    with open(f"/proc/{pid}/mountinfo", "rb") as f:
        for line in f:
            fields = line.split()
            if int(fields[0]) == mnt_id:
                return fields[fields.index(b"-") + 1].decode("ascii", "replace")
    return None


def check_setup(pid, checks, sources):
    """Each setup check of the plan, found below /proc/PID/root without following any
    symlink; the reason the first one fails, or None."""
    for c in checks:
        path = raw(c["path"])
        names = [n for n in path.split(b"/") if n]
        fd = os.open(f"/proc/{pid}/root", os.O_PATH | os.O_DIRECTORY)
        parent = None
        try:
            for i, name in enumerate(names):
                if parent is not None:
                    os.close(parent)
                parent, fd = fd, os.open(name, os.O_PATH | os.O_NOFOLLOW, dir_fd=fd)
                if stat.S_ISLNK(os.fstat(fd).st_mode) and i < len(names) - 1:
                    return f"{path!r} is reached through a symlink"
            st = os.fstat(fd)
            kind = c["kind"]
            if kind == "symlink":
                if not stat.S_ISLNK(st.st_mode) or os.readlink(b"", dir_fd=fd) != raw(c["link_target"]):
                    return f"{path!r} is not the symlink to {c['link_target']!r}"
                continue
            if stat.S_ISLNK(st.st_mode):
                return f"{path!r} is a symlink"
            if kind == "directory":
                if not stat.S_ISDIR(st.st_mode):
                    return f"{path!r} is not a directory"
                continue
            mnt = mount_of(fd)
            if parent is not None and mount_of(parent) == mnt:
                return f"{path!r} is not a mount point: the mount went elsewhere"
            if c["read_only"] and not os.fstatvfs(fd).f_flag & os.ST_RDONLY:
                return f"{path!r} is a writable mount, not read-only"
            if kind == "bind":
                src = os.fstat(sources[c["fd"]])
                if (st.st_dev, st.st_ino) != (src.st_dev, src.st_ino):
                    return f"{path!r} shows another object than descriptor {c['fd']}"
            elif fs_type(pid, mnt) != ("proc" if kind == "proc" else "tmpfs"):
                return f"{path!r} is not a {kind} mount"
        except OSError as e:
            return f"{path!r} cannot be checked ({e.strerror})"
        finally:
            os.close(fd)
            if parent is not None:
                os.close(parent)
    return None


SYS_OPENAT2 = 437  # the same on every architecture (the unified system call table)
RESOLVE_NO_MAGICLINKS, RESOLVE_IN_ROOT = 0x02, 0x10


def deny_roots_absent(pid, missing_deny_roots):
    """The deny roots missing when the plan was made, looked up below /proc/PID/root
    as the sandbox's command would (symlinks followed within its root): none may be there.
    The host's watches see a name created, never a filesystem mounted; one mounted after
    the watches were set and before the private mount namespace was made is in the
    sandbox (red team A9D-1). The reason, or None."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    how = struct.pack("=QQQ", os.O_PATH | os.O_CLOEXEC, 0, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
    root = os.open(f"/proc/{pid}/root", os.O_PATH | os.O_DIRECTORY)
    try:
        for path in missing_deny_roots:
            fd = libc.syscall(SYS_OPENAT2, root, ctypes.c_char_p(path.lstrip(b"/")),
                              ctypes.c_char_p(how), ctypes.c_size_t(len(how)))
            err = ctypes.get_errno()
            if fd >= 0:
                os.close(fd)
                return (f"deny root {path!r} is in the sandbox and nothing masks it (a "
                        "filesystem mounted on the host since the plan was made?)")
            # Unreachable with the caller's credentials: the command cannot reach it either.
            if err not in (errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.ELOOP):
                return f"deny root {path!r} cannot be looked up in the sandbox: {os.strerror(err)}"
    finally:
        os.close(root)
    return None


def terminate(pid, init):
    """The timeout's SIGTERM: to every process in the sandbox's pid namespace but its init
    (which is not the command), or to the process group when there is no sandbox."""
    ns = None
    if init is not None:
        try:
            ns = os.readlink(f"/proc/{init}/ns/pid")
        except OSError:
            pass
    if ns is None or ns == os.readlink("/proc/self/ns/pid"):
        os.killpg(pid, signal.SIGTERM)
        return
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != init:
            try:
                if os.readlink(f"/proc/{name}/ns/pid") == ns:
                    os.kill(int(name), signal.SIGTERM)
            except OSError:
                pass


def stop(pid, init, reaped=False):
    """SIGKILL to the sandbox's init (and so its whole pid namespace) and the group."""
    for victim, kill in ((init, os.kill), (pid, os.killpg)):
        try:
            if victim is not None:
                kill(victim, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if not reaped:
        os.waitpid(pid, 0)


def child_pid(status_r, seen):
    """The sandbox's init from bwrap's status stream, once it has been written."""
    try:
        seen += os.read(status_r, 65536)
    except BlockingIOError:
        pass
    # bwrap writes the line in several pieces: only a line ended by its newline is whole.
    for line in seen.split(b"\n")[:-1]:
        if b"child-pid" in line:
            return json.loads(line)["child-pid"], seen
    return None, seen


# (descriptor, termios, line discipline, exclusive) of each terminal among 0-2, by device.
TERMINALS = []
TIOCGEXCL = 0x80045440
# (descriptor, status flags) of each of 0-2: an open file the command shares with the caller.
STREAM_FLAGS = []


def save_terminals():
    """What the command can change on a terminal it is given, and this process puts back
    once the sandbox is gone, before it writes anything (`zpolicy run` does the same, red
    team A11-1, A11-2): its settings (`stty -echo -icanon`), its line discipline (TIOCSETD
    to N_NULL leaves a terminal whose reads and writes fail), exclusive mode (TIOCEXCL:
    later opens fail EBUSY) and its output (tcflow TCOOFF stops it, and a write to it then
    blocks forever)."""
    seen = set()
    for fd in (0, 1, 2):
        try:
            if not os.isatty(fd) or os.fstat(fd).st_rdev in seen:
                continue
            seen.add(os.fstat(fd).st_rdev)
            disc = struct.unpack("i", fcntl.ioctl(fd, termios.TIOCGETD, b"\0" * 4))[0]
            excl = struct.unpack("i", fcntl.ioctl(fd, TIOCGEXCL, b"\0" * 4))[0]
            TERMINALS.append((fd, termios.tcgetattr(fd), disc, excl))
        except OSError:
            continue


def save_stream_flags():
    """The status flags of 0-2 (F_GETFL), which the command can change on the open file it
    shares with the caller (a pipe on stdout): O_NONBLOCK left on made the caller's next
    writer into that pipe fail with EAGAIN (red team R18-5)."""
    for fd in (0, 1, 2):
        try:
            STREAM_FLAGS.append((fd, fcntl.fcntl(fd, fcntl.F_GETFL)))
        except OSError:
            continue


@functools.cache
def held_by_a_session(rdev):
    """Whether a process has the terminal `rdev` as its controlling terminal (tty_nr, the
    seventh field of /proc/PID/stat). Judged once per terminal, at the start, as `zpolicy
    run` judges it: the loop asks again every 10 ms."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        tty = int(data[data.rfind(b")") + 2:].split()[4])
        if tty and ((tty >> 8) & 0xfff, (tty & 0xff) | ((tty >> 12) & 0xfff00)) == (
                os.major(rdev), os.minor(rdev)):
            return True
    return False


def refuse_a_terminal_read_from_the_background():
    """None when no terminal among 0-2 could give the sandbox what is typed to the shell;
    else why (see the module's docstring, red team R18-4, A19-1, A20-5)."""
    for fd in (0, 1, 2):
        if not os.isatty(fd):
            continue
        try:
            foreground = os.tcgetpgrp(fd)
        except OSError:
            # A pseudo-terminal no session holds (a harness's) reaches no one's typing.
            if held_by_a_session(os.fstat(fd).st_rdev):
                return (f"descriptor {fd} is a terminal that is not this process's controlling "
                        "terminal but another session's, whose typing the sandbox could read "
                        "unseen by job control")
            continue
        if foreground != os.getpgrp():
            return (f"descriptor {fd} is the terminal this process runs in the background of: "
                    "the sandbox, outside the terminal's session, would read what is typed to "
                    "the shell")
    return None


def restore_terminals():
    """From a background process group these calls would stop this process with SIGTTOU;
    blocked, the kernel lets them through. Output is restarted whatever it was before. The
    status flags of 0-2 are put back too (save_stream_flags)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
    for fd, attrs, disc, excl in TERMINALS:
        try:
            if struct.unpack("i", fcntl.ioctl(fd, termios.TIOCGETD, b"\0" * 4))[0] != disc:
                fcntl.ioctl(fd, termios.TIOCSETD, struct.pack("i", disc))
            termios.tcsetattr(fd, termios.TCSANOW, attrs)
            termios.tcflow(fd, termios.TCOON)
            if not excl:
                fcntl.ioctl(fd, termios.TIOCNXCL)
        except OSError:
            pass
    signal.pthread_sigmask(signal.SIG_SETMASK, old)
    for fd, flags in STREAM_FLAGS:
        try:
            if fcntl.fcntl(fd, fcntl.F_GETFL) != flags:
                fcntl.fcntl(fd, fcntl.F_SETFL, flags)
        except OSError:
            pass


def open_closed_standard_descriptors():
    """A closed 0, 1 or 2 would be the number of the next file this process opens (the
    plan, a bind source), which would then reach the sandbox in its place (red team
    R8-D1): each is opened on /dev/null first, as `zpolicy run` does."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open("/dev/null", os.O_RDONLY if fd == 0 else os.O_WRONLY)
            os.set_inheritable(null, True)


# Set by SIGTSTP (^Z), which ends the run (see the module's docstring).
SUSPEND_ASKED = []


def main():
    open_closed_standard_descriptors()
    signal.signal(signal.SIGTSTP, lambda *_: SUSPEND_ASKED.append(True))
    save_terminals()
    save_stream_flags()
    with open(sys.argv[1], "rb") as f:
        plan = json.loads(f.read().decode("utf-8"))
    if plan.get("zpolicy_plan") != 7:
        refuse("not a version 7 zpolicy plan")
    if plan["backend"] not in ("bwrap", "unconfined"):
        refuse(f"backend {plan['backend']} is not supported by this executor")
    if plan["network_proxy"] is not None:
        # Without the proxy the command's connections would fail inside: refuse instead.
        refuse("the plan needs the network proxy, which this executor does not serve "
               "(zpolicy run or the API's run(plan) do)")
    exe = raw(plan["exe"])
    argv = [raw(a) for a in plan["argv"]]
    # What bwrap itself starts with: nothing. Its loader runs on the host, before the
    # sandbox exists, and would act on the command's LD_PRELOAD and the like (red team
    # R7-E1); the command's environment ("env") reaches the command through the
    # "environment" descriptor below, never through bwrap's own.
    env = dict(raw(e).split(b"=", 1) for e in plan["exe_env"])
    cwd = raw(plan["cwd"])
    timeout = plan["timeout_ms"]

    if plan["fds"] and plan.get("block_fd") is None:
        refuse("descriptor contents without a block descriptor to hand them over at")
    if plan.get("block_fd") is not None and plan["status_fd"] is None:
        refuse("a block descriptor without a status stream")

    # An unconfined command stays in the terminal's session, where the kernel's job control
    # stops a background reader.
    confined = plan["backend"] == "bwrap"
    if confined and (why := refuse_a_terminal_read_from_the_background()) is not None:
        refuse(why)
    stdio, relays = sandbox_stdio() if confined else ([], [])
    take_host_run_lock()
    created = make_placeholders(plan["placeholders"])
    # Watched from before the bind sources are opened until the sandbox is gone: a name
    # replaced before the watch is then the wrong object for open_binds, one replaced after
    # it trips the watch.
    # The host's mount table from before the last look at the deny roots' ways (in
    # HostNameWatch) to after the child's private mount namespace exists: a filesystem
    # mounted in between is in the sandbox, where no watch sees what the host puts in it
    # (red team A9D-1, A10-3). POLLPRI once it changed.
    mounts = select.poll()
    mountinfo = open("/proc/self/mountinfo", "rb")
    mounts.register(mountinfo, select.POLLPRI)
    missing_deny_roots = [raw(p) for p in plan["missing_deny_roots"]]
    watch = HostNameWatch(plan["watches"], missing_deny_roots, created)
    payloads = open_binds(plan.get("binds", []), plan["placeholders"], created) + stdio
    # Each descriptor's content through a pipe whose write end only this process holds,
    # filled just before the release: bwrap takes end of file on the block descriptor as
    # a release too, so if this process dies before the release, bwrap finds an empty
    # seccomp program and fails rather than start the command unchecked (docs/run.md).
    held = []
    for fd in plan["fds"]:
        content = raw(fd["content"])
        if fd["when"] == "start":
            # Read by bwrap as soon as it starts (--args): a sealed memfd filled now.
            m = os.memfd_create("environment", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
            os.write(m, content)
            os.lseek(m, 0, os.SEEK_SET)
            fcntl.fcntl(m, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK |
                        fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
            payloads.append((m, fd["fd"]))
            continue
        if fd["when"] != "release":
            refuse(f"descriptor {fd['fd']}: unknown hand-over time {fd['when']!r}")
        r, w = os.pipe()
        if fcntl.fcntl(w, fcntl.F_GETPIPE_SZ) < len(content):
            fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, len(content))
        payloads.append((r, fd["fd"]))
        held.append((w, content))
    status_r = None
    if plan["status_fd"] is not None:
        status_r, status_w = os.pipe()
        payloads.append((status_w, plan["status_fd"]))
        os.set_blocking(status_r, False)
    block_w = None
    if plan.get("block_fd") is not None:
        block_r, block_w = os.pipe()
        payloads.append((block_r, plan["block_fd"]))
    sources = {dst: src for src, dst in payloads}

    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            # Out of the way of the target numbers first, then onto them.
            top = max([dst for _, dst in payloads] + [63]) + 1
            high = [(fcntl.fcntl(src, fcntl.F_DUPFD_CLOEXEC, top), dst) for src, dst in payloads]
            for src, dst in high:
                os.dup2(src, dst, inheritable=True)
            os.chdir(cwd)
            if plan["private_mounts"]:
                try:
                    private_mount_namespace()
                except OSError as e:
                    print(f"run_plan.py: cannot give the sandbox a private mount namespace: "
                          f"{e.strerror}", file=sys.stderr)
                    raise
            os.execve(exe, argv, env)
        finally:
            os._exit(125)
    # The bind sources stay open until the setup check has compared them.
    for src, dst in payloads:
        if block_w is None or dst not in {b["fd"] for b in plan.get("binds", [])}:
            os.close(src)
    for t in relays:
        t.start()
    seen, released, init = b"", block_w is None, None
    deadline = time.monotonic() + timeout / 1000 if timeout is not None else None
    status = None
    while status is None:
        done, st = os.waitpid(pid, os.WNOHANG)
        undone = None if done else watch.undone()
        background = None if done or not confined else refuse_a_terminal_read_from_the_background()
        if done:
            status = st
        elif SUSPEND_ASKED or background is not None:
            stop(pid, init)
            restore_terminals()
            remove_placeholders(created)
            if SUSPEND_ASKED:
                print("run_plan.py: ^Z (SIGTSTP): this executor cannot stop the sandbox with "
                      "itself, so the sandbox was ended", file=sys.stderr)
                sys.exit(128 + signal.SIGTSTP)
            print(f"run_plan.py: {background}; the sandbox was stopped", file=sys.stderr)
            sys.exit(125)
        elif undone is not None:
            stop(pid, init)
            restore_terminals()
            remove_placeholders(created)
            print(f"run_plan.py: {undone}, so the protection there no longer held; the sandbox "
                  "was stopped", file=sys.stderr)
            sys.exit(125)
        elif deadline is not None and time.monotonic() > deadline:
            # SIGTERM first, then SIGKILL to all that is left after the plan's grace.
            terminate(pid, init)
            grace_end = time.monotonic() + plan["timeout_grace_ms"] / 1000
            while not done and time.monotonic() < grace_end:
                time.sleep(0.01)
                done, _ = os.waitpid(pid, os.WNOHANG)
            stop(pid, init, reaped=done)
            restore_terminals()
            remove_placeholders(created)
            print("run_plan.py: timed out", file=sys.stderr)
            sys.exit(124)
        elif not released:
            init, seen = child_pid(status_r, seen)
            if init is None:
                time.sleep(0.001)
                continue
            released = True
            unseen = None
            try:
                blocked = wait_until_blocked(init, plan["block_fd"])
            except SetupUnseen as e:
                blocked, unseen = False, str(e)
            why = check_setup(init, plan["setup_checks"], sources) if blocked else None
            if why is None and blocked:
                why = deny_roots_absent(init, missing_deny_roots)
            if why is None and blocked and missing_deny_roots and mounts.poll(0):
                named = show(missing_deny_roots[0])
                why = ("a filesystem was mounted or unmounted on the host while the run started, "
                       f"which could bring deny root '{named}' into the sandbox unseen")
            if why is not None:
                why = f"the sandbox is not what was verified: {why}"
            if unseen is not None:
                why = unseen
            for b in plan.get("binds", []):
                os.close(sources[b["fd"]])
            if why is None and blocked:
                # Before the command can open one: what it takes, no other run lacks.
                why = limit_notify(init, plan["notify_share"])
            if why is None and (undone := watch.undone()) is not None:
                why = undone
            if why is not None:
                os.killpg(pid, signal.SIGKILL)  # bwrap's init is still in this group
                os.waitpid(pid, 0)
                remove_placeholders(created)
                refuse(why)
            try:
                if blocked:  # else bwrap ended on its own: its status stream tells
                    for w, content in held:
                        os.write(w, content)  # the pipe holds it all: bwrap reads it later
                        os.close(w)
                    os.write(block_w, b"1")
            except BrokenPipeError:
                pass  # bwrap ended meanwhile: its exit status tells
        else:
            if status_r is not None:
                try:
                    os.read(status_r, 65536)
                except BlockingIOError:
                    pass
            # Woken at once by a watched change, else every 10 ms to reap.
            select.select([watch.fd] if watch.fd is not None else [], [], [], 0.01)
    restore_terminals()
    remove_placeholders(created)
    for t in relays:
        t.join()
    sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


main()
