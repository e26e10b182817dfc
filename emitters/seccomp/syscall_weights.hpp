#pragma once

#include <cstdint>
#include <string_view>

namespace zpolicy::emitters::seccomp {

// How often real programs make an x86_64 syscall (calls per 4,000,000 of the mix in
// bench/seccomp/mix, recorded with strace). Compiled in, so the program shape is
// deterministic. 0 for a call the mix never made.
uint32_t syscall_weight(std::string_view name);

}  // namespace zpolicy::emitters::seccomp
