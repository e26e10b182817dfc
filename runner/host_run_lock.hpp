#pragma once

#include <string>

namespace zpolicy::runner {

// The lock that tells a run's cleanup whether a run of any user on the host may still rely
// on a placeholder (runner/placeholders): every run holds it shared for its life, and a
// run removes placeholders only while it holds it exclusively, that is when no other run
// is live.
//
// It is /dev/zpolicy/runs.lock. Only root can create an entry in /dev, so no other user can
// own, pre-create, rename or unlink the name (red team R3-L1); root's runs and `zpolicy
// doctor` run as root create it, and boot clears it with the rest of /dev. Every sandbox has
// a /dev of its own (bwrap --dev, and verify refuses binds under the host's /dev), so no
// sandbox can reach it. A run trusts it only as a root-owned regular file with one link, in
// a root-owned directory, neither writable by anybody else.
//
// A run that finds it missing or untrusted, or that finds at the end that the name no
// longer names the inode it locked, is uncoordinated: it removes nothing (its placeholders
// stay, and its run record with them, for a later coordinated run of the same user).
class HostRunLock {
 public:
  static constexpr const char* kDir = "/dev/zpolicy";
  static constexpr const char* kPath = "/dev/zpolicy/runs.lock";

  HostRunLock() = default;
  HostRunLock(const HostRunLock&) = delete;
  HostRunLock& operator=(const HostRunLock&) = delete;
  ~HostRunLock();

  // Opens the lock (as root, creates it) and takes it: exclusively when no other run is
  // live, else shared. Returns false with `error` set only when another holder keeps it
  // exclusively for 5 s (fail closed). Sets `note` when this run is uncoordinated.
  bool acquire(std::string& error, std::string& note);

  // Whether this run took the lock exclusively and it is the one the name names: the run
  // may then reconcile dead runs, and must call share() after (false with `error` set
  // as acquire()).
  bool alone() const { return alone_; }
  bool share(std::string& error);

  // At the end of the run: whether it may remove its placeholders, that is the lock is
  // trusted, no other run holds it, and its name still names the inode this run locked.
  // When true the run holds it exclusively until release().
  bool alone_at_the_end();

  void release();

  // For `zpolicy doctor`: creates the directory and the lock when the caller is root, and
  // says what is wrong with them (empty when they are trusted).
  static std::string ensure();

 private:
  int fd_ = -1;
  bool coordinated_ = false;
  bool alone_ = false;
};

}  // namespace zpolicy::runner
