// zpolicy: a thin command line over libzpolicy. Each subcommand lives in its own file.
#include <iostream>
#include <map>
#include <string>

#include "cli/commands.hpp"
#include "zpolicy/exit_code.hpp"
#include "zpolicy/version.hpp"

namespace {

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
  try {
    return it->second.fn(zpolicy::cli::Args(argv + 2, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "zpolicy: internal error: " << e.what() << "\n";
    return zpolicy::kExitInternal;
  }
}
