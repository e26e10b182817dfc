#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// The protected paths so far, for "is this path, or a directory above it, protected
// already": a lookup per separator of the path, not a scan of every protected path. Git
// targets are checked one by one as protected paths are added, and a sandbox's nested
// repositories name as many as it likes (twenty indexes of 4 000 gitlinks): the scan made
// every later run quadratic in them (red team R17-6). `protect` may only grow while the
// index is used; what was appended since the last question is indexed first.
class ProtectedIndex {
 public:
  explicit ProtectedIndex(const std::vector<ir::ResolvedPath>& protect) : protect_(protect) {}

  bool contains(std::string_view path) {
    catch_up();
    return paths_.contains(path);
  }

  // Whether ir::path_within(p, path) holds for a protected path p: p is `path`, "/", or
  // `path` cut before one of its separators.
  bool covers(std::string_view path) {
    catch_up();
    if (paths_.contains(path) || paths_.contains("/")) return true;
    for (auto at = path.find('/'); at != std::string_view::npos; at = path.find('/', at + 1))
      if (paths_.contains(path.substr(0, at))) return true;
    return false;
  }

 private:
  void catch_up() {
    for (; indexed_ < protect_.size(); ++indexed_) paths_.insert(protect_[indexed_].path);
  }

  const std::vector<ir::ResolvedPath>& protect_;
  size_t indexed_ = 0;
  std::set<std::string, std::less<>> paths_;
};

}  // namespace zpolicy::compiler
