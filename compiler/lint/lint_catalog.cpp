#include "compiler/lint/lint_catalog.hpp"

namespace zpolicy::compiler {

const std::vector<LintRule>& lint_catalog() {
  using S = ir::Severity;
  static const std::vector<LintRule> rules{
      {"ZP000", "InvalidPolicy", S::Error, "the policy does not load",
       "A syntax or schema error: nothing is compiled, checked or run until it is fixed."},
      {"ZP001", "ProtectedPathUnderNoWritableRoot", S::Warning,
       "an absolute protected path lies under no writable root",
       "It is read-only anyway, so the rule does nothing; it may name the wrong root."},
      {"ZP002", "NestedWritableRoots", S::Warning, "a writable root is nested in another one",
       "The inner root adds nothing; protected subpaths apply relative to both."},
      {"ZP003", "WritableHomeOrStartupFile", S::Error,
       "a writable root holds the home directory, a shell start-up file or a credential store",
       "A write there runs code or leaks secrets outside the sandbox later (~/.bashrc, "
       "~/.profile, ~/.ssh, ...)."},
      {"ZP004", "WritablePolicyFile", S::Error,
       "a writable root holds the policy file, or a directory or symlink on its way",
       "The sandboxed command could rewrite the policy that the next run obeys."},
      {"ZP005", "WritableZpolicyBinary", S::Error,
       "a writable root holds the zpolicy binary or the sandbox backend (bwrap, sandbox-exec)",
       "The sandboxed command could replace the program that confines the next run."},
      {"ZP006", "WritableRootSymlinkOut", S::Warning,
       "a writable root is a symlink out of itself",
       "The symlink's target, not the path the policy names, becomes writable."},
      {"ZP007", "FullNetworkWithDenyRoots", S::Warning,
       "network: full in a policy with three or more deny roots",
       "Secrets kept from the filesystem can still leave through the network."},
      {"ZP008", "DenyInsideProtected", S::Warning, "a deny root lies inside a protected path",
       "It is denied; the protection above it stays read-only."},
      {"ZP009", "DenyRootIsSlash", S::Error, "'/' is a deny root",
       "It denies everything, including the command itself."},
      {"ZP010", "DangerFullAccess", S::Warning, "the mode is danger-full-access",
       "Commands run without any sandbox."},
      {"ZP011", "NoProtectedSubpaths", S::Warning,
       "protect: [] in a mode that writes",
       "Every writable root is then writable whole: .git (hooks run later on the host), .env "
       "and the other defaults included."},
      {"ZP012", "SecretLookingEnvKept", S::Warning,
       "an environment name kept into the sandbox looks like a secret",
       "Names such as *_TOKEN, *_KEY, *SECRET*, *PASSWORD*, AWS_* are readable by everything "
       "the sandbox runs; keep them only if the command needs them."},
      {"ZP013", "WritableSystemDirectory", S::Error,
       "a writable root is, holds or lies in a system tree (/etc, /usr, /bin, /sbin, /lib*, /boot, "
       "/opt, /nix, /snap) or in host state root's tools and services trust (/run, /var/lib, "
       "/var/cache, /var/spool, /var/log, /var/mail, /var/www, /var/backups), is or holds a "
       "directory that holds disks, services' data or homes (/srv, /mnt, /media, /home, /var), "
       "or is or holds a directory every user shares (/tmp, /var/tmp, /dev/shm, /run/lock, "
       "/dev/mqueue, any sticky world-writable directory); bound, by every name bind mounts "
       "give it",
       "Programs, configuration and state the host runs or reads back, often as root (dpkg "
       "maintainer scripts, cron jobs, a web server's code), become writable from the sandbox; "
       "in a shared directory, what other users and programs keep there (sockets, scripts, "
       "logs) does, and what the sandbox leaves there outlives it. A directory of the run's "
       "own below a shared one (mktemp -d), or a project below /srv or /mnt, is fine."},
      {"ZP014", "PublicSuffixWildcard", S::Error,
       "a network allow-list wildcard covers a whole public suffix (*.com, *.co.uk, *.github.io)",
       "Anyone can own a name below a public suffix, so the entry admits anyone: an "
       "exfiltration path. docs/lints.md lists the suffixes zpolicy knows."},
      {"ZP015", "AllowEntryNeverMatches", S::Warning,
       "a network allow-list entry can never be admitted",
       "An ip: literal the proxy refuses (loopback, private, link-local, ...), or a name "
       "under .localhost or .invalid; the host's loopback is reached with localhost:PORT."},
      {"ZP016", "WorkspaceInDenyRoot", S::Error,
       "the workspace lies in one of the policy's deny roots",
       "The deny wins, so nothing leaks, but the command cannot start in its working "
       "directory; the policy or the directory is a mistake."},
      {"ZP017", "WritableKernelInterface", S::Error,
       "a writable root is on, or holds a writable mount of, a kernel interface filesystem "
       "(procfs, sysfs, cgroup, debugfs, tracefs, securityfs, configfs, efivarfs, pstore, bpf, "
       "binfmt_misc, mqueue, ...), by its type, whatever its name",
       "Its files are the host kernel's state: a sandbox started by root would change the host "
       "through them (a bind of /sys elsewhere, a second procfs mount)."},
      {"ZP100", "SyscallRule", S::Error,
       "a syscall rule names no syscall or argument of the target, or compares bits the kernel "
       "ignores",
       "A deny that matches nothing is a dropped deny (error); a comparison of ignored bits is "
       "a warning. docs/seccomp.md describes the baseline."},
      {"verify-linux", "LinuxArtifactDropsDeny", S::Error,
       "the compiled bwrap argv or seccomp filter grants what the policy denies",
       "The independent analyzer found an access the artifact allows and the policy does not "
       "(a dropped deny); nothing is written or run."},
      {"verify-macos", "MacosArtifactDropsDeny", S::Error,
       "the compiled Seatbelt profile grants what the policy denies",
       "The independent analyzer found an access the profile allows and the policy does not "
       "(a dropped deny); nothing is written or run."},
  };
  return rules;
}

const LintRule* find_lint_rule(std::string_view id) {
  for (const auto& r : lint_catalog())
    if (r.id == id) return &r;
  return nullptr;
}

}  // namespace zpolicy::compiler
