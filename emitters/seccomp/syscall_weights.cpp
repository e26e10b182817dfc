#include "emitters/seccomp/syscall_weights.hpp"

#include <algorithm>
#include <iterator>

namespace zpolicy::emitters::seccomp {
namespace {

struct Weight {
  std::string_view name;
  uint32_t calls;
};

constexpr Weight kWeights[] = {
#include "emitters/seccomp/syscall_weights.inc"
};

}  // namespace

uint32_t syscall_weight(std::string_view name) {
  auto it = std::lower_bound(std::begin(kWeights), std::end(kWeights), name,
                             [](const Weight& w, std::string_view n) { return w.name < n; });
  return it != std::end(kWeights) && it->name == name ? it->calls : 0;
}

}  // namespace zpolicy::emitters::seccomp
