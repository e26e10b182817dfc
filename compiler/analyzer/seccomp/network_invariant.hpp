#pragma once

#include <span>
#include <vector>

#include "compiler/analyzer/seccomp/bpf_insn.hpp"
#include "ir/diagnostic.hpp"
#include "ir/resolved.hpp"

namespace zpolicy::compiler {

// Invariant 4, checked on the program itself rather than against the IR's rules, so
// that a baseline that lost a rule is caught as surely as an edited artifact. Under
// `network: none` and `loopback`, no socket the sandbox can make may address a host
// socket file or abstract name: the program must refuse socket() for AF_UNIX and every
// family but AF_INET/AF_INET6 (`none`: every family), socketpair() for any family but
// AF_UNIX and any type but SOCK_STREAM and SOCK_SEQPACKET (flags and high bits
// included; SOCK_RAW is a datagram socket for AF_UNIX), and io_uring, which makes and
// connects sockets without these calls. Under `none` also connect() and a sendto() with
// an address. The same on the x32 and i386 ABIs (socketcall included). Returns one
// finding per call the program lets through; none under `full`. `program` is seccomp.bpf
// as parse_bpf reads it.
std::vector<ir::Diagnostic> check_network_invariant(const ir::Resolved& resolved,
                                                    std::span<const BpfInsn> program);

}  // namespace zpolicy::compiler
