#include <algorithm>
#include <fstream>
#include <sstream>

#include "cli/options.hpp"
#include "compiler/analyzer/seccomp/bpf_interpreter.hpp"
#include "ir/syscall_table.hpp"

namespace zpolicy::cli {
namespace {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool looks_binary(const std::string& bytes) {
  return bytes.find('\0') != std::string::npos;
}

// Decimal, or hexadecimal after "0x": nothing else (no sign, no blanks, no octal for a
// leading zero), and nothing that does not fit in 64 bits.
std::optional<uint64_t> parse_u64(const std::string& s) {
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const unsigned base = hex ? 16 : 10;
  const std::string_view digits = std::string_view(s).substr(hex ? 2 : 0);
  if (digits.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : digits) {
    unsigned d;
    if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
    else if (hex && c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
    else if (hex && c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
    else return std::nullopt;
    if (v > (~uint64_t{0} - d) / base) return std::nullopt;
    v = v * base + d;
  }
  return v;
}

// Digits, or 0x and hex digits: a number, whether or not it fits.
bool looks_numeric(const std::string& s) {
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const std::string_view digits = std::string_view(s).substr(hex ? 2 : 0);
  return !digits.empty() && std::all_of(digits.begin(), digits.end(), [hex](char c) {
    return (c >= '0' && c <= '9') || (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
  });
}

}  // namespace

int cmd_inspect(const Args& args) {
  const std::string usage =
      "zpolicy inspect FILE [--syscall NAME [--arch x86_64|x32|i386] [--args A0,A1,...]]";
  po::options_description opts("inspect options");
  opts.add_options()("file", po::value<std::string>()->required(), "artifact to inspect")(
      "syscall", po::value<std::string>(), "evaluate one call against a seccomp program")(
      "arch", po::value<std::string>()->default_value("x86_64"), "ABI of the call")(
      "args", po::value<std::string>()->default_value(""),
      "comma-separated argument values (decimal or 0x hex), missing ones are 0");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  bool help = false;
  if (!parse_options(args, usage, opts, pos, vm, help)) return kExitUsage;
  if (help) return kExitOk;
  const std::string path = vm["file"].as<std::string>();
  auto bytes = read_file(path);
  if (!bytes) {
    std::cerr << "zpolicy: cannot read '" << path << "'\n";
    return kExitUsage;
  }
  bool bpf = path.ends_with(".bpf") || looks_binary(*bytes);
  if (!vm.count("syscall")) {
    if (!bpf) {
      std::cout << *bytes;
      return kExitOk;
    }
    std::string error;
    if (!compiler::parse_bpf(*bytes, &error)) {
      std::cerr << path << ": error: " << error << "\n";
      return kExitUsage;
    }
    std::cout << compiler::disassemble_bpf(std::string_view(*bytes));
    return kExitOk;
  }

  auto arch = ir::parse_arch(vm["arch"].as<std::string>());
  if (!arch) {
    std::cerr << "zpolicy: invalid --arch (expected x86_64, x32 or i386)\n";
    return kExitUsage;
  }
  const std::string name = vm["syscall"].as<std::string>();
  const ir::SyscallInfo* info = ir::find_syscall(*arch, name);
  // The table stores x32 numbers with the x32 bit; evaluate_bpf adds it itself.
  uint32_t nr = 0;
  if (info) {
    nr = info->nr & ~ir::kX32SyscallBit;
  } else if (auto number = parse_u64(name); number || looks_numeric(name)) {
    // seccomp_data.nr is 32 bits: a wider number would be cut to another call.
    if (!number || *number > 0xffffffffu) {
      std::cerr << "zpolicy: invalid --syscall " << name
                << ": a system call number is 32 bits (at most 4294967295)\n";
      return kExitUsage;
    }
    nr = static_cast<uint32_t>(*number);
  } else {
    std::cerr << "zpolicy: unknown syscall '" << name << "' for " << ir::to_string(*arch) << "\n";
    return kExitUsage;
  }
  // An i386 register holds 32 bits, so no i386 call carries a wider argument.
  const uint64_t widest = *arch == ir::Arch::I386 ? 0xffffffffu : ~uint64_t{0};
  std::array<uint64_t, 6> call_args{};
  std::stringstream list(vm["args"].as<std::string>());
  size_t i = 0;
  for (std::string item; std::getline(list, item, ',');) {
    auto v = parse_u64(item);
    if (!v || i >= call_args.size() || *v > widest) {
      std::cerr << "zpolicy: invalid --args '" << item << "' (at most 6 numbers, decimal or 0x hex, "
                << (widest == ~uint64_t{0} ? "64" : "32") << " bits each for " << ir::to_string(*arch)
                << ")\n";
      return kExitUsage;
    }
    call_args[i++] = *v;
  }
  std::string error;
  auto eval = compiler::evaluate_bpf(*bytes, *arch, nr, call_args, 0, &error);
  if (!eval) {
    std::cerr << path << ": error: " << error << "\n";
    return kExitUsage;
  }
  std::cout << name << " (" << ir::to_string(*arch) << " #" << nr << "): "
            << (eval->action ? eval->action->str() : compiler::seccomp_ret_name(eval->ret)) << " (ret 0x" << std::hex
            << eval->ret << std::dec << ", " << eval->executed << " instructions)\n";
  return kExitOk;
}

}  // namespace zpolicy::cli
