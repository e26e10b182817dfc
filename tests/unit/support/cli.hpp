#pragma once

// The built zpolicy binary run in a temp directory of its own, for the cli_* suites.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "subprocess.hpp"
#include "temp_dir.hpp"

namespace zpolicy::test {

struct Cli {
  TempDir dir;

  ProcessResult run(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {ZPOLICY_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, dir.str(), dir.str());
  }
  // golden/NAME copied into the directory as `as`.
  void copy_golden(const std::string& name, const std::string& as) const {
    dir.write(as, slurp(std::string(ZPOLICY_SOURCE_DIR) + "/golden/" + name));
  }
  // The names in a subdirectory, sorted.
  std::vector<std::string> listing(const std::string& rel) const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir / rel))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

}  // namespace zpolicy::test
