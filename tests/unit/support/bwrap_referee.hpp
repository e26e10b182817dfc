#pragma once

// The real bwrap and kernel as the referee of verify_bwrap's verdicts (issue 19), in one
// place for both tiers that use it: the mutation tier's random edits of the golden argvs
// bound to a scratch tree (tests/unit/verify_bwrap_random_edits.cpp) and the kernel tier's
// fixed sample of mutants (tests/kernel/verify_bwrap_referee_test.cpp). An argv runs in one
// real bwrap with a probe that reads and writes every file and directory it can find in
// the scratch tree; what it read is seen in its output (every file holds a line naming
// it), what it changed in the tree afterwards. Both are judged by a plain reading of the
// policy's lists written here, not by the analyzer's intent.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../verify_bwrap_fixture.hpp"
#include "bwrap_script_run.hpp"

namespace zpolicy::test {

// A scratch tree and the plain reading of a policy over it. Paths are relative to the
// tree's root ("/w/.git").
struct ScratchWorld {
  std::vector<std::string> dirs, files;  // made below the root, everything open to every user
  std::vector<std::string> writable;     // where the policy lets the sandbox change things
  std::vector<std::string> kept;         // below a writable place, yet kept (protected, denied)
  std::vector<std::string> denied;       // never to be read

  static bool below(const std::string& dir, const std::string& rel) {
    return rel == dir || rel.starts_with(dir + "/");
  }
  bool lets_change(const std::string& rel) const {
    bool in = false;
    for (const auto& w : writable) in = in || below(w, rel);
    for (const auto& k : kept) in = in && !below(k, rel);
    for (const auto& d : denied) in = in && !below(d, rel);
    return in;
  }
  bool is_denied(const std::string& rel) const {
    for (const auto& d : denied)
      if (below(d, rel)) return true;
    return false;
  }
};

// The line each file of the tree holds: the probe prints the first line of what it reads.
inline std::string content_mark(const std::string& rel) { return "zp-content " + rel; }

inline void make_tree(const std::string& root, const ScratchWorld& world) {
  namespace fs = std::filesystem;
  for (const auto& d : world.dirs) fs::create_directories(root + d);
  for (const auto& f : world.files) {
    fs::create_directories(fs::path(root + f).parent_path());
    std::ofstream(root + f) << content_mark(f) << "\n";
  }
  for (const auto& e : fs::recursive_directory_iterator(root))
    fs::permissions(e.path(), fs::perms::all);
  fs::permissions(root, fs::perms::all);
}

// Every entry below root (never following links), with what a write would change.
inline std::map<std::string, std::string> snapshot(const std::string& root) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string rel = e.path().string().substr(root.size());
    struct stat st;
    if (lstat(e.path().c_str(), &st) != 0) continue;
    std::string what = std::to_string(st.st_mode);
    if (S_ISREG(st.st_mode)) {
      std::ifstream in(e.path());
      what += " " + std::string(std::istreambuf_iterator<char>(in), {});
    } else if (S_ISLNK(st.st_mode)) {
      what += " -> " + fs::read_symlink(e.path()).string();
    }
    out[rel] = what;
  }
  return out;
}

// Reads and writes whatever it finds below the scratch tree and the two names below /tmp
// where mutants put aliases; links are not followed, their targets are walked as
// themselves. Builtins only, so that a run costs one fork (find): `read` shows a file's
// first line (each file here has one), `true`, not `:`, makes the files (a failed
// redirection of a special builtin ends the shell). Never all of /tmp: a mutant that shows
// the host's /tmp (or a probe that runs outside a sandbox) would append to every file there
// as root; on 2026-12-05 it did, corrupting git objects that /tmp clones hard-link with the
// main repository (lead).
inline std::string probe_script(const std::string& root) {
  return "PATH=/usr/bin:/bin; echo zp-probe-started\n"
         "find '" + root + "' /tmp/zp-alias /tmp/zp-link 2>/dev/null | while IFS= read -r p; do\n"
         "  if test -f \"$p\" && ! test -L \"$p\"; then read -r l < \"$p\" && echo \"$l\"; echo zp-write >> \"$p\"; fi\n"
         "  if test -d \"$p\" && ! test -L \"$p\"; then true > \"$p/zp-new\"; fi\n"
         "done 2>/dev/null\n"
         "echo zp-probe-finished\n";
}

struct ProbeOutcome {
  bool ran = false;  // bwrap set the sandbox up and the probe finished
  std::string output;
};

// One bwrap with the probe, as the caller or as nobody. A mutant bwrap refuses to set up
// is no access. `--seccomp FD` is dropped: the filter is not what is judged here.
inline ProbeOutcome run_probe(const std::vector<Option>& argv, const std::string& root,
                              bool as_nobody) {
  std::vector<Option> options;
  for (const auto& o : argv)
    if (o.front() != "--seccomp") options.push_back(o);
  ProbeOutcome o;
  o.output = run_script_in_bwrap(options, probe_script(root), as_nobody).output;
  o.ran = o.output.find("zp-probe-finished") != std::string::npos;
  return o;
}

// What the kernel let the probe do beyond the policy, in words; empty if nothing.
inline std::vector<std::string> escapes(const ScratchWorld& world, const std::string& root,
                                        const ProbeOutcome& o,
                                        const std::map<std::string, std::string>& before) {
  std::vector<std::string> out;
  for (const auto& f : world.files)
    if (world.is_denied(f) && o.output.find(content_mark(f) + "\n") != std::string::npos)
      out.push_back("read " + f);
  const auto after = snapshot(root);
  std::set<std::string> changed;
  for (const auto& [rel, what] : after)
    if (auto it = before.find(rel); it == before.end() || it->second != what) changed.insert(rel);
  for (const auto& [rel, what] : before)
    if (!after.contains(rel)) changed.insert(rel);
  for (const auto& rel : changed)
    if (!world.lets_change(rel)) out.push_back("changed " + rel);
  return out;
}

// A scratch directory outside /tmp (the sandbox's private /tmp would hide it), open to
// every user (the checkout may not be), removed however the test ends (a failed
// requirement throws).
class ScratchBase {
 public:
  explicit ScratchBase(const std::string& name) {
    std::string tmpl = "/var/tmp/" + name + ".XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl);
    path_ = tmpl;
    std::filesystem::permissions(path_, std::filesystem::perms::all);
  }
  ~ScratchBase() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchBase(const ScratchBase&) = delete;
  ScratchBase& operator=(const ScratchBase&) = delete;
  const std::string& str() const { return path_; }

 private:
  std::string path_;
};

// The callers each argv runs as: the test's own user, and nobody (uid and gid 65534, no
// groups) when that is root.
inline std::vector<bool> callers_as_nobody() {
  std::vector<bool> callers = {false};
  if (geteuid() == 0 && std::filesystem::exists("/usr/bin/setpriv")) callers.push_back(true);
  return callers;
}

}  // namespace zpolicy::test
