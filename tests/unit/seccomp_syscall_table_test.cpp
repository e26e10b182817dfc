#include <boost/test/unit_test.hpp>

#include <seccomp.h>

#include <set>
#include <string>

#include "ir/syscall_table.hpp"

namespace ir = zpolicy::ir;
using W = ir::ArgWidth;

namespace {

uint32_t scmp_arch(ir::Arch a) {
  switch (a) {
    case ir::Arch::X86_64:
      return SCMP_ARCH_X86_64;
    case ir::Arch::X32:
      return SCMP_ARCH_X32;
    case ir::Arch::I386:
      return SCMP_ARCH_X86;
  }
  return 0;
}

std::array<W, 6> widths(const char* name, ir::Arch a = ir::Arch::X86_64) {
  const auto* s = ir::find_syscall(a, name);
  BOOST_REQUIRE_MESSAGE(s != nullptr, name);
  return s->args;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(seccomp_syscall_table)

BOOST_AUTO_TEST_CASE(tables_are_sorted_unique_and_agree_with_libseccomp) {
  for (auto arch : {ir::Arch::X86_64, ir::Arch::X32, ir::Arch::I386}) {
    BOOST_TEST_CONTEXT(ir::to_string(arch)) {
      const auto table = ir::syscall_table(arch);
      BOOST_TEST(table.size() > 300u);
      std::set<std::string_view> names;
      size_t compared = 0;
      for (size_t i = 0; i < table.size(); ++i) {
        if (i > 0) BOOST_TEST(table[i - 1].nr < table[i].nr);
        BOOST_TEST(names.insert(table[i].name).second, table[i].name);
        BOOST_TEST(ir::find_syscall(arch, table[i].nr) == &table[i]);
        BOOST_TEST(ir::find_syscall(arch, table[i].name) == &table[i]);
        const int theirs =
            seccomp_syscall_resolve_name_arch(scmp_arch(arch), std::string(table[i].name).c_str());
        if (theirs >= 0) {
          ++compared;
          BOOST_TEST(static_cast<uint32_t>(theirs) == table[i].nr, table[i].name);
        }
        if (arch == ir::Arch::X32) BOOST_TEST((table[i].nr & ir::kX32SyscallBit) != 0u);
      }
      BOOST_TEST(compared > 300u);
    }
  }
}

BOOST_AUTO_TEST_CASE(calls_newer_than_libseccomp_are_known) {
  const std::pair<const char*, uint32_t> newer[] = {
      {"cachestat", 451}, {"fchmodat2", 452}, {"futex_wake", 454}, {"statmount", 457},
      {"listmount", 458}, {"lsm_get_self_attr", 459}, {"lsm_list_modules", 461},
      {"mseal", 462},     {"setxattrat", 463}, {"removexattrat", 466},
      {"open_tree_attr", 467}, {"file_getattr", 468}, {"file_setattr", 469}};
  for (const auto& [name, nr] : newer) {
    BOOST_TEST(ir::find_syscall(ir::Arch::X86_64, name)->nr == nr);
    BOOST_TEST(ir::find_syscall(ir::Arch::I386, name)->nr == nr);
    BOOST_TEST(ir::find_syscall(ir::Arch::X32, name)->nr == (nr | ir::kX32SyscallBit));
  }
  BOOST_TEST(ir::find_syscall(ir::Arch::X86_64, "map_shadow_stack")->nr == 453u);
  BOOST_TEST(ir::find_syscall(ir::Arch::X32, "map_shadow_stack") == nullptr);  // 64-bit only
  BOOST_TEST(ir::max_syscall_number(ir::Arch::X86_64) == 469u);
}

BOOST_AUTO_TEST_CASE(argument_widths_follow_the_kernel_prototypes) {
  using A = std::array<W, 6>;
  BOOST_TEST((widths("socket") == A{W::U32, W::U32, W::U32, W::None, W::None, W::None}));
  BOOST_TEST((widths("ioctl") == A{W::U32, W::U32, W::U64, W::None, W::None, W::None}));
  BOOST_TEST((widths("clone") == A{W::U64, W::U64, W::U64, W::U64, W::U64, W::None}));
  BOOST_TEST((widths("clone3") == A{W::U64, W::U64, W::None, W::None, W::None, W::None}));
  BOOST_TEST((widths("personality") == A{W::U32, W::None, W::None, W::None, W::None, W::None}));
  BOOST_TEST((widths("mmap") == A{W::U64, W::U64, W::U64, W::U64, W::U64, W::U64}));
  BOOST_TEST((widths("ptrace") == A{W::U64, W::U64, W::U64, W::U64, W::None, W::None}));
  BOOST_TEST((widths("kill") == A{W::U32, W::U32, W::None, W::None, W::None, W::None}));
  BOOST_TEST((widths("lseek") == A{W::U32, W::U64, W::U32, W::None, W::None, W::None}));
  BOOST_TEST((widths("getpid") == A{W::None, W::None, W::None, W::None, W::None, W::None}));
  BOOST_TEST((widths("file_setattr") == A{W::U32, W::U64, W::U64, W::U64, W::U32, W::None}));
  // x32's own ioctl entry goes through compat_sys_ioctl: every argument is 32-bit.
  BOOST_TEST((widths("ioctl", ir::Arch::X32) == A{W::U32, W::U32, W::U32, W::None, W::None, W::None}));
  BOOST_TEST((widths("socketcall", ir::Arch::I386) == A{W::U32, W::U32, W::None, W::None, W::None, W::None}));
  // i386 passes a 64-bit offset in two registers.
  BOOST_TEST((widths("pread64", ir::Arch::I386) == A{W::U32, W::U32, W::U32, W::U32, W::U32, W::None}));
}

BOOST_AUTO_TEST_CASE(arch_names_and_audit_values) {
  for (auto a : {ir::Arch::X86_64, ir::Arch::X32, ir::Arch::I386})
    BOOST_TEST((ir::parse_arch(ir::to_string(a)) == a));
  BOOST_TEST(!ir::parse_arch("arm64").has_value());
  BOOST_TEST(ir::audit_arch(ir::Arch::X32) == ir::kAuditArchX86_64);
  BOOST_TEST(ir::audit_arch(ir::Arch::I386) == ir::kAuditArchI386);
}

BOOST_AUTO_TEST_SUITE_END()
