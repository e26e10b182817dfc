#include <unistd.h>

#include <climits>
#include <filesystem>

#include "cli/options.hpp"

namespace zpolicy::cli {
namespace {

// The old form was `explain POLICY PATH`: a policy file given first, where a path to
// explain is expected now, would silently be explained as a path under the default.
bool looks_like_old_policy_argument(const std::string& arg) {
  std::error_code ec;
  return (arg.ends_with(".yaml") || arg.ends_with(".yml")) &&
         std::filesystem::is_regular_file(arg, ec);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const auto comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

int refuse(const std::string& message, const std::string& usage) {
  std::cerr << "zpolicy: " << message << "\nusage: " << usage << "\n";
  return kExitUsage;
}

}  // namespace

int cmd_explain(const Args& args) {
  const std::string usage =
      "zpolicy explain [--policy P] PATH... [--op read|write|create|delete] [--target linux|macos]\n"
      "                [--mode M] [--workspace DIR | --portable] [--verbose] [--format text|json]\n"
      "       zpolicy explain [--policy P] --syscall NAME [--args A,B,...] [--arch ARCH]\n"
      "       zpolicy explain [--policy P] --connect HOST:PORT";
  po::options_description opts("explain options");
  opts.add_options()("policy", po::value<std::string>(),
                     "policy file (default: the built-in default policy, as `run` uses)")(
      "path", po::value<std::vector<std::string>>(),
      "paths to explain: absolute, relative to the current directory, ~/..., or ${WORKSPACE}/...")(
      "op", po::value<std::string>(), "read, write (default), create or delete")(
      "target", po::value<std::string>(), "linux or macos (default: this host's; both with --portable)")(
      "mode", po::value<std::string>(), "narrow the policy's mode")(
      "workspace", po::value<std::string>(), "bind the policy to this workspace (default: the current directory)")(
      "portable", po::bool_switch(), "answer for the portable artifacts (${WORKSPACE} unbound) on both targets")(
      "syscall", po::value<std::string>(), "explain a system call (name or number) instead")(
      "args", po::value<std::string>(),
      "with --syscall: its arguments, comma-separated numbers or names (AF_UNIX,SOCK_STREAM)")(
      "arch", po::value<std::string>(), "with --syscall: x86_64 (default), x32 or i386")(
      "connect", po::value<std::string>(), "explain a network destination HOST:PORT instead")(
      "verbose,v", po::bool_switch(), "list Seatbelt's precedence models where they disagree")(
      "format", po::value<std::string>()->default_value("text"), "text or json");
  po::positional_options_description pos;
  pos.add("path", -1);
  po::variables_map vm;
  bool help = false;
  if (!parse_options(args, usage, opts, pos, vm, help)) return kExitUsage;
  if (help) return kExitOk;

  const auto paths =
      vm.count("path") ? vm["path"].as<std::vector<std::string>>() : std::vector<std::string>{};
  const bool syscall = vm.count("syscall") > 0, connect = vm.count("connect") > 0;
  const bool portable = vm["portable"].as<bool>();
  const std::string format_name = vm["format"].as<std::string>();
  if (format_name != "text" && format_name != "json")
    return refuse("invalid --format '" + format_name + "' (expected text or json)", usage);
  if (syscall + connect + !paths.empty() != 1)
    return refuse(paths.empty() && !syscall && !connect
                      ? "missing the PATH argument"
                      : "give paths, --syscall NAME or --connect HOST:PORT, one of them",
                  usage);
  if (vm.count("args") && !syscall) return refuse("--args goes with --syscall NAME", usage);
  if (vm.count("arch") && !syscall) return refuse("--arch goes with --syscall NAME", usage);
  if (vm.count("op") && paths.empty()) return refuse("--op goes with paths", usage);
  if (portable && vm.count("workspace"))
    return refuse("--portable answers for no workspace; drop --workspace DIR", usage);
  if (!vm.count("policy") && paths.size() > 1 && looks_like_old_policy_argument(paths.front()))
    return refuse("'" + paths.front() + "' looks like a policy file: give it as --policy " +
                      paths.front() +
                      " (to ask about the file itself, name it after the other paths)",
                  usage);
#if !defined(__APPLE__)
  if (!portable && vm.count("target") && vm["target"].as<std::string>() == "macos" && !connect)
    return refuse("this host is not macOS, so a bound policy has no macos artifacts: add --portable",
                  usage);
#endif

  Request request = request_of(vm);
  if (!portable && !request.workspace) {
    // Bound to the current directory, as `run` binds it.
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return refuse("cannot determine the current directory", usage);
    request.workspace = cwd;
  }
  const auto target =
      vm.count("target") ? std::optional(vm["target"].as<std::string>()) : std::nullopt;
  std::vector<Explanation> explanations;
  if (connect) {
    explanations.push_back(explain_connect(request, vm["connect"].as<std::string>()));
  } else if (syscall) {
    SyscallCall call;
    call.syscall = vm["syscall"].as<std::string>();
    if (vm.count("arch")) call.arch = vm["arch"].as<std::string>();
    if (vm.count("args")) call.args = split_commas(vm["args"].as<std::string>());
    explanations.push_back(explain_syscall(request, call, target));
  } else {
    const std::string op = vm.count("op") ? vm["op"].as<std::string>() : "write";
    for (const auto& p : paths) explanations.push_back(explain(request, p, op, target));
  }
  for (const auto& e : explanations)
    if (e.exit_code != kExitOk) {
      print_diagnostics(e.diagnostics);
      return e.exit_code;
    }
  std::cout << render_explanations(
      explanations, format_name == "json" ? ExplainFormat::Json : ExplainFormat::Text,
      vm["verbose"].as<bool>());
  return kExitOk;
}

}  // namespace zpolicy::cli
