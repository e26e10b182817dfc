#pragma once

// The reference filter: the same IR syscall policy compiled by libseccomp, for the
// differential test and the benchmark. Header-only so that both can include it without
// making libseccomp a dependency of libzpolicy.

#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>

#include "ir/syscall_policy.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::bench {

inline uint32_t libseccomp_action(const ir::Action& a) {
  switch (a.kind) {
    case ir::Action::Kind::Allow:
      return SCMP_ACT_ALLOW;
    case ir::Action::Kind::Errno:
      return SCMP_ACT_ERRNO(a.errno_value);
    case ir::Action::Kind::Kill:
      return SCMP_ACT_KILL_PROCESS;
  }
  return SCMP_ACT_KILL_PROCESS;
}

inline scmp_compare libseccomp_op(ir::CmpOp op) {
  switch (op) {
    case ir::CmpOp::Eq:
      return SCMP_CMP_EQ;
    case ir::CmpOp::Ne:
      return SCMP_CMP_NE;
    case ir::CmpOp::Lt:
      return SCMP_CMP_LT;
    case ir::CmpOp::Le:
      return SCMP_CMP_LE;
    case ir::CmpOp::Gt:
      return SCMP_CMP_GT;
    case ir::CmpOp::Ge:
      return SCMP_CMP_GE;
    case ir::CmpOp::MaskedEq:
      return SCMP_CMP_MASKED_EQ;
  }
  return SCMP_CMP_EQ;
}

struct LibseccompBuild {
  std::string bpf;      // the exported program
  size_t skipped = 0;   // rules for names x86_64 lacks, or that libseccomp refused
};

// Native x86_64 filter; every other ABI (x32 included) gets the bad-arch action. Rules
// are added as written: libseccomp's own 64-bit argument comparisons are what is being
// measured. optimize: 1 = linear (libseccomp's default), 2 = binary tree.
inline LibseccompBuild build_libseccomp(const ir::SyscallPolicy& policy, int optimize) {
  scmp_filter_ctx ctx = seccomp_init(libseccomp_action(policy.default_action));
  if (ctx == nullptr) throw std::runtime_error("seccomp_init failed");
  LibseccompBuild out;
  seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, libseccomp_action(policy.foreign_abi_action));
  seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, static_cast<uint32_t>(optimize)) != 0)
    throw std::runtime_error("SCMP_FLTATR_CTL_OPTIMIZE refused");
  for (const auto& r : policy.rules) {
    const ir::SyscallInfo* s = ir::find_syscall(ir::Arch::X86_64, r.name);
    if (s == nullptr) {
      ++out.skipped;
      continue;
    }
    std::vector<scmp_arg_cmp> conds;
    for (const auto& c : r.conditions) {
      if (c.op == ir::CmpOp::MaskedEq)
        conds.push_back({c.index, SCMP_CMP_MASKED_EQ, c.mask, c.value});
      else
        conds.push_back({c.index, libseccomp_op(c.op), c.value, 0});
    }
    const int rc = seccomp_rule_add_exact_array(ctx, libseccomp_action(r.action),
                                                static_cast<int>(s->nr),
                                                static_cast<unsigned>(conds.size()),
                                                conds.data());
    if (rc != 0) ++out.skipped;
  }
  const int fd = memfd_create("libseccomp-bpf", 0);
  if (fd < 0 || seccomp_export_bpf(ctx, fd) != 0) {
    seccomp_release(ctx);
    throw std::runtime_error("seccomp_export_bpf failed");
  }
  seccomp_release(ctx);
  const off_t size = lseek(fd, 0, SEEK_END);
  out.bpf.resize(static_cast<size_t>(size));
  if (pread(fd, out.bpf.data(), out.bpf.size(), 0) != size) {
    close(fd);
    throw std::runtime_error("reading the exported filter failed");
  }
  close(fd);
  return out;
}

}  // namespace zpolicy::bench
