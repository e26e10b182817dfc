// zpolicy: a thin command line over libzpolicy. Each subcommand lives in its own file.
#include <fcntl.h>

#include <cerrno>
#include <iostream>
#include <map>
#include <string>

#include "cli/commands.hpp"
#include "zpolicy/exit_code.hpp"
#include "zpolicy/version.hpp"
#include "zpolicy/zpolicy.hpp"

namespace {

// A closed descriptor 0, 1 or 2 would be the number of the next file zpolicy opens (the
// host run lock, a bind source such as the workspace's directory), which `run` would then
// hand the sandbox as its stdin or stdout (red team R8-D1). So before anything is opened,
// each closed one is opened on /dev/null (read-only for 0, write-only for 1 and 2), as the
// C library does for set-user-ID programs: the command reads end of file, its output is
// dropped.
void open_closed_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    // The lowest free number, which is `fd`: every lower one is open by now.
    const int null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (null >= 0 && null != fd) close(null);
  }
}

struct Command {
  int (*fn)(const zpolicy::cli::Args&);
  const char* summary;
};

const std::map<std::string, Command>& commands() {
  using namespace zpolicy::cli;
  static const std::map<std::string, Command> c = {
      {"compile", {cmd_compile, "compile a policy into a target's artifacts"}},
      {"verify", {cmd_verify, "check a compiled artifact directory against a policy"}},
      {"check", {cmd_check, "lint a policy and verify every target"}},
      {"diff", {cmd_diff, "the semantic difference of two policies: what widened, what narrowed"}},
      {"explain", {cmd_explain, "say which rule decides an access, and why"}},
      {"inspect", {cmd_inspect, "disassemble a BPF program or pretty-print an artifact"}},
      {"run", {cmd_run, "run a command inside the compiled sandbox (fail-closed)"}},
      {"plan", {cmd_plan, "print everything run would do, for another tool to execute"}},
      {"cleanup", {cmd_cleanup, "remove placeholders left by runs that were killed"}},
      {"doctor", {cmd_doctor, "report which sandbox backend this host can use"}},
      {"show-default", {cmd_show_default, "print the built-in default policy"}},
  };
  return c;
}

void usage(std::ostream& out) {
  out << "usage: zpolicy COMMAND [OPTIONS]\n\ncommands:\n";
  for (const auto& [name, c] : commands())
    out << "  " << name << std::string(14 - name.size(), ' ') << c.summary << "\n";
  out << "\n'zpolicy COMMAND --help' describes one command; 'zpolicy --version' prints the "
         "version.\n";
}

}  // namespace

int main(int argc, char** argv) {
  open_closed_standard_descriptors();
  if (argc < 2) {
    usage(std::cerr);
    return zpolicy::kExitUsage;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(std::cout);
    return zpolicy::kExitOk;
  }
  if (name == "--version" || name == "-V" || name == "version") {
    std::cout << "zpolicy " << ZPOLICY_VERSION << "\n";
    return zpolicy::kExitOk;
  }
  auto it = commands().find(name);
  if (it == commands().end()) {
    std::cerr << "zpolicy: unknown command '" << name << "'\n";
    usage(std::cerr);
    return zpolicy::kExitUsage;
  }
  // Every command acts on the caller's word with the effective rights: `inspect` printed
  // any file the owner may read, `--status-file` and `--out` wrote where the owner may, a
  // danger-full-access run kept the effective user (red team A13B-1).
  if (const std::string why = zpolicy::privileged_start(); !why.empty()) {
    std::cerr << "zpolicy: refusing to start: " << why << "; nothing was done\n";
    return zpolicy::kExitInternal;
  }
  try {
    return it->second.fn(zpolicy::cli::Args(argv + 2, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "zpolicy: internal error: " << e.what() << "\n";
    return zpolicy::kExitInternal;
  }
}
