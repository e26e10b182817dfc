#pragma once

#include <random>
#include <string>
#include <vector>

#include "verify_bwrap_fixture.hpp"

// Random edits of a bwrap argv, with a fixed seed (issue 19): options inserted, deleted,
// changed to another kind, given another path, duplicated. The mutation tier judges the
// edits verify_bwrap accepts with the real bwrap and with a model
// (verify_bwrap_random_edits.cpp).
namespace zpolicy::test {

inline const std::vector<std::string> kEditBinds = {"--bind", "--ro-bind", "--bind-try",
                                                    "--ro-bind-try"};
inline const std::vector<std::string> kEditDestOps = {"--tmpfs", "--remount-ro", "--dir"};

class ArgvEditor {
 public:
  // `paths`: what an edit may name (sources and destinations).
  ArgvEditor(unsigned seed, std::vector<std::string> paths)
      : rng_(seed), paths_(std::move(paths)) {}

  std::vector<Option> edit(std::vector<Option> argv) {
    const int edits = 1 + static_cast<int>(pick(3));
    for (int e = 0; e < edits; ++e) {
      switch (pick(5)) {
        case 0:
          argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(pick(argv.size() + 1)),
                      random_option());
          break;
        case 1:
          if (!argv.empty())
            argv.erase(argv.begin() + static_cast<std::ptrdiff_t>(pick(argv.size())));
          break;
        case 2: {  // another kind of mount at the same place
          Option& o = argv[pick(argv.size())];
          if (o.size() == 3 && o[0].find("bind") != std::string::npos)
            o[0] = kEditBinds[pick(kEditBinds.size())];
          else if (o.size() == 2 &&
                   (o[0] == "--tmpfs" || o[0] == "--dir" || o[0] == "--remount-ro"))
            o[0] = kEditDestOps[pick(kEditDestOps.size())];
          break;
        }
        case 3: {  // another path
          Option& o = argv[pick(argv.size())];
          if ((o.size() == 3 && o[0].find("bind") != std::string::npos) ||
              (o.size() == 2 && o[0] != "--cap-drop" && o[0] != "--seccomp" && o[0] != "--chdir"))
            o[1 + pick(o.size() - 1)] = paths_[pick(paths_.size())];
          break;
        }
        case 4: {  // an option again, somewhere else
          const Option o = argv[pick(argv.size())];
          argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(pick(argv.size() + 1)), o);
          break;
        }
      }
    }
    return argv;
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  Option random_option() {
    if (pick(2)) {
      const std::string& src = paths_[pick(paths_.size())];
      return {kEditBinds[pick(kEditBinds.size())], src, pick(2) ? src : paths_[pick(paths_.size())]};
    }
    return {kEditDestOps[pick(kEditDestOps.size())], paths_[pick(paths_.size())]};
  }
  std::mt19937 rng_;
  std::vector<std::string> paths_;
};

}  // namespace zpolicy::test
