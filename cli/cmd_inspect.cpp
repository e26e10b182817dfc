#include <sstream>

#include "cli/artifact_files.hpp"
#include "cli/options.hpp"

namespace zpolicy::cli {
namespace {

// "1,0x2" -> {"1", "0x2"}; an empty list is no arguments.
std::vector<std::string> split_args(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
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
  // Read as verify reads a directory's artifacts: an artifact a pull request adds as a
  // symlink (or a FIFO) would otherwise print, disassembled, any file the reviewer can read.
  auto read = read_artifact_file(path);
  if (!read.content) {
    std::cerr << "zpolicy: "
              << (read.refusal.empty() ? "cannot read '" + path + "': no such file" : read.refusal)
              << "\n";
    return kExitUsage;
  }
  const std::string& bytes = *read.content;
  const auto shown =
      vm.count("syscall")
          ? evaluate_syscall(path, bytes,
                             {vm["syscall"].as<std::string>(), vm["arch"].as<std::string>(),
                              split_args(vm["args"].as<std::string>())})
          : inspect(path, bytes);
  print_diagnostics(shown.diagnostics);
  std::cout << shown.text;
  return shown.exit_code;
}

}  // namespace zpolicy::cli
