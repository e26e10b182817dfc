#!/usr/bin/env python3
"""Generates ir/syscall_table_data.inc: syscall names, numbers and argument widths for
x86_64, x32 and i386.

Inputs (all from Debian packages, none needed by the build, which uses the committed
output):
  --uapi DIR      the dir holding unistd_64.h, unistd_x32.h, unistd_32.h
                  (linux-libc-dev: /usr/include/x86_64-linux-gnu/asm)
  --kernel DIR    a kernel header tree holding include/linux/syscalls.h and
                  include/linux/compat.h (linux-headers-<ver>-common)

Regenerate (from the repository root):
  apt-get download linux-headers-6.1.0-50-common && dpkg -x linux-headers-*.deb /tmp/lh
  scripts/gen_syscall_table.py --kernel /tmp/lh/usr/src/linux-headers-6.1.0-50-common \
      > ir/syscall_table_data.inc

Calls newer than those headers (451..469, up to Linux 6.18) and the x86-only calls whose
prototypes live outside include/linux are listed below with their prototypes from the
kernel source, so that their widths are derived by the same rule as all others.

Width rule: the x86_64 syscall wrappers cast each 64-bit register to the declared
parameter type, so a parameter whose type is narrower than 64 bits (int, unsigned int,
pid_t, umode_t, ...) is truncated by the kernel and is U32; pointers, longs, size_t,
loff_t and u64 are U64. Entries served by compat_sys_* (x32's 512..547 block) and every
i386 argument are 32-bit. i386 arity counts each 64-bit parameter as two registers.
"""
import argparse
import re
import sys

NEWER = {  # number: prototype (identical on x86_64 and i386; x32 unless noted)
    451: "cachestat(unsigned int fd, struct cachestat_range __user *cstat_range, struct cachestat __user *cstat, unsigned int flags)",
    452: "fchmodat2(int dfd, const char __user *filename, umode_t mode, unsigned int flags)",
    453: "map_shadow_stack(unsigned long addr, unsigned long size, unsigned int flags)",
    454: "futex_wake(void __user *uaddr, unsigned long mask, int nr, unsigned int flags)",
    455: "futex_wait(void __user *uaddr, unsigned long val, unsigned long mask, unsigned int flags, struct __kernel_timespec __user *timeout, clockid_t clockid)",
    456: "futex_requeue(struct futex_waitv __user *waiters, unsigned int flags, int nr_wake, int nr_requeue)",
    457: "statmount(const struct mnt_id_req __user *req, struct statmount __user *buf, size_t bufsize, unsigned int flags)",
    458: "listmount(const struct mnt_id_req __user *req, u64 __user *mnt_ids, size_t nr_mnt_ids, unsigned int flags)",
    459: "lsm_get_self_attr(unsigned int attr, struct lsm_ctx __user *ctx, u32 __user *size, u32 flags)",
    460: "lsm_set_self_attr(unsigned int attr, struct lsm_ctx __user *ctx, u32 size, u32 flags)",
    461: "lsm_list_modules(u64 __user *ids, u32 __user *size, u32 flags)",
    462: "mseal(unsigned long start, size_t len, unsigned long flags)",
    463: "setxattrat(int dfd, const char __user *path, unsigned int at_flags, const char __user *name, const struct xattr_args __user *uargs, size_t usize)",
    464: "getxattrat(int dfd, const char __user *path, unsigned int at_flags, const char __user *name, struct xattr_args __user *uargs, size_t usize)",
    465: "listxattrat(int dfd, const char __user *path, unsigned int at_flags, char __user *list, size_t size)",
    466: "removexattrat(int dfd, const char __user *path, unsigned int at_flags, const char __user *name)",
    467: "open_tree_attr(int dfd, const char __user *path, unsigned flags, struct mount_attr __user *uattr, size_t usize)",
    468: "file_getattr(int dfd, const char __user *filename, struct file_attr __user *ufattr, size_t usize, unsigned int at_flags)",
    469: "file_setattr(int dfd, const char __user *filename, struct file_attr __user *ufattr, size_t usize, unsigned int at_flags)",
}
NOT_X32 = {"map_shadow_stack"}  # a "64" entry in syscall_64.tbl

# Prototypes of x86-specific calls (arch/x86/kernel/*.c SYSCALL_DEFINEs).
X86_ONLY = [
    "mmap(unsigned long addr, unsigned long len, unsigned long prot, unsigned long flags, unsigned long fd, unsigned long off)",
    "arch_prctl(int option, unsigned long arg2)",
    "iopl(unsigned int level)",
    "modify_ldt(int func, void __user *ptr, unsigned long bytecount)",
    "rt_sigreturn(void)",
    "sigreturn(void)",
    "vm86old(struct vm86_struct __user *user_vm86)",
    "vm86(unsigned long cmd, unsigned long arg)",
    "set_thread_area(struct user_desc __user *u_info)",
    "get_thread_area(struct user_desc __user *u_info)",
    "uretprobe(void)",
]

# x32's legacy block 512..547 (syscall_64.tbl): entries served by compat_sys_*.
X32_COMPAT = {
    "rt_sigaction", "rt_sigreturn", "ioctl", "recvfrom", "sendmsg", "recvmsg", "execve",
    "ptrace", "rt_sigpending", "rt_sigtimedwait", "rt_sigqueueinfo", "sigaltstack",
    "timer_create", "mq_notify", "kexec_load", "waitid", "set_robust_list",
    "get_robust_list", "move_pages", "preadv", "pwritev", "rt_tgsigqueueinfo",
    "recvmmsg", "sendmmsg", "io_setup", "io_submit", "execveat", "preadv2", "pwritev2",
}

# i386 names whose entry point is spelled differently.
I386_ALIASES = {"umount2": "umount", "_llseek": "llseek", "_newselect": "select", "_sysctl": "sysctl"}

U32_TYPES = {
    "int", "unsigned", "u32", "uint32_t", "__s16", "__u16", "u8", "__u32", "s32", "__s32", "pid_t", "uid_t", "gid_t",
    "old_uid_t", "old_gid_t", "umode_t", "qid_t", "clockid_t", "timer_t", "mqd_t",
    "key_t", "rwf_t", "key_serial_t", "u16", "short", "__kernel_old_uid_t",
    "__kernel_old_gid_t", "compat_int_t", "compat_uint_t", "compat_ulong_t",
    "compat_long_t", "compat_size_t", "compat_uptr_t", "compat_pid_t", "compat_off_t",
    "compat_ssize_t", "compat_clock_t", "compat_time_t", "compat_sigset_word",
    "compat_aio_context", "compat_key_t", "compat_timer_t", "compat_uid_t", "compat_gid_t",
    "old_sigset_t", "compat_old_sigset_t", "compat_mode_t",
}
U64_TYPES = {
    "long", "size_t", "ssize_t", "loff_t", "off_t", "u64", "__u64", "s64", "aio_context_t",
    "cap_user_header_t", "cap_user_data_t", "__kernel_old_time_t", "time_t", "caddr_t",
    "compat_arg_u64", "compat_loff_t", "sigset_t", "__sighandler_t",
}
QUALIFIERS = {"const", "volatile", "__user", "struct", "union", "enum", "signed"}


def width(param):
    if "*" in param:
        return "U64"
    if re.match(r"(const\s+)?enum\b", param):
        return "U32"
    words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", param) if w not in QUALIFIERS]
    if "long" in words:
        return "U64"
    for w in words:
        if w in U64_TYPES:
            return "U64"
        if w in U32_TYPES or w.startswith("compat_"):
            return "U32"
    if words and words[0] == "unsigned":
        return "U32"
    raise SystemExit(f"unknown parameter type: {param!r}")


def is_64bit_value(param):
    """True for a parameter that takes two registers on i386 (loff_t, u64, long long)."""
    if "*" in param:
        return False
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", param)
    return (words.count("long") == 2 or
            any(w in {"loff_t", "u64", "__u64", "s64", "compat_arg_u64", "compat_loff_t"}
                for w in words))


def parse_prototypes(text, prefix):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    protos = {}
    for m in re.finditer(r"asmlinkage\s+long\s+" + prefix + r"(\w+)\s*\(([^)]*)\)\s*;", text):
        params = [p.strip() for p in " ".join(m.group(2).split()).split(",")]
        if params == ["void"]:
            params = []
        protos[m.group(1)] = params  # the last #ifdef variant is x86_64's (no CLONE_BACKWARDS)
    return protos


def split_proto(p):
    name, rest = p.split("(", 1)
    params = [s.strip() for s in rest.rstrip(")").split(",")]
    return name.strip(), ([] if params == ["void"] else params)


def read_numbers(path):
    out = {}
    for line in open(path):
        m = re.match(r"#define __NR_(\w+) \(?(?:__X32_SYSCALL_BIT \+ )?(\d+)\)?$", line.strip())
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--uapi", default="/usr/include/x86_64-linux-gnu/asm")
    ap.add_argument("--kernel", required=True)
    args = ap.parse_args()

    native = parse_prototypes(open(args.kernel + "/include/linux/syscalls.h").read(), "sys_")
    compat = parse_prototypes(open(args.kernel + "/include/linux/compat.h").read(), "compat_sys_")
    for p in X86_ONLY + list(NEWER.values()):
        n, params = split_proto(p)
        native[n] = params

    def native_widths(name):
        params = native.get({"umount2": "umount"}.get(name, name))
        if params is None:
            return None
        return [width(p) for p in params]

    tables = {}
    for arch, header in (("X86_64", "unistd_64.h"), ("X32", "unistd_x32.h"), ("I386", "unistd_32.h")):
        nums = read_numbers(f"{args.uapi}/{header}")
        for nr, proto in NEWER.items():
            name = split_proto(proto)[0]
            if arch == "X32" and name in NOT_X32:
                continue
            nums.setdefault(name, nr)
        rows = []
        for name, nr in nums.items():
            if arch == "X86_64":
                w = native_widths(name)
            elif arch == "X32":
                if nr >= 512 and nr <= 547 and name in X32_COMPAT:
                    w = ["U32"] * len(compat.get(name, native.get(name, [""] * 6)))
                else:
                    w = native_widths(name)
            else:
                base = I386_ALIASES.get(name, name)
                params = native.get(base, compat.get(base))
                if params is None:
                    w = None
                else:
                    regs = sum(2 if is_64bit_value(p) else 1 for p in params)
                    w = ["U32"] * min(regs, 6)
            if w is None:
                # Not implemented on this kernel (sys_ni_syscall: afs_syscall, tuxcall,
                # ...) or without a prototype we know: every register may matter.
                w = ["U64" if arch != "I386" else "U32"] * 6
            full_nr = nr + (0x40000000 if arch == "X32" else 0)
            rows.append((full_nr, name, w + ["None"] * (6 - len(w))))
        rows.sort()
        tables[arch] = rows

    out = sys.stdout
    out.write("// Generated by scripts/gen_syscall_table.py; do not edit.\n")
    out.write("// Sources: linux-libc-dev uapi unistd_{64,x32,32}.h, linux-headers "
              "include/linux/{syscalls,compat}.h, and the script's list of calls up to 6.18.\n")
    for arch, rows in tables.items():
        out.write(f"inline constexpr SyscallInfo k{arch.title().replace('_', '')}Table[] = {{\n")
        for nr, name, w in rows:
            ws = ", ".join("W::" + x for x in w)
            out.write(f'    {{"{name}", {nr:#x}u, {{{ws}}}}},\n' if arch == "X32" else
                      f'    {{"{name}", {nr}u, {{{ws}}}}},\n')
        out.write("};\n")


if __name__ == "__main__":
    main()
