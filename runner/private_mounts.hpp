#pragma once

namespace zpolicy::runner {

// Moves the calling process into a mount namespace of its own whose mounts propagate
// nothing in either direction (red team A17B-4; docs/run.md "The guard"). bwrap makes its
// sandbox's mounts slaves of the mounts of the namespace it starts in: started in the
// host's, a filesystem the host mounts during the run (a USB stick, an sshfs, a
// container's volume) under a read root or a writable root would appear in the sandbox
// with the host's own flags, writable, or would bring a deny root into being where no
// watch sees it. Started from this namespace, the sandbox sees the host's mounts as they
// were when the run started, and nothing that is mounted later.
//
// As root (CAP_SYS_ADMIN) the namespace is one of the host's user namespace, so bwrap
// keeps the credentials a root-started sandbox is checked with. Otherwise it is made
// inside a user namespace of the caller's own that maps only the caller's uid and gid to
// themselves, which bwrap's own user namespace then nests in.
//
// System calls and stack buffers only: the guard, a fork of a process that may have other
// threads, calls it. Returns nullptr, or why the namespace could not be made, a static
// string (the run must not start then: nothing would keep the host's later mounts out).
const char* enter_private_mount_namespace();

}  // namespace zpolicy::runner
