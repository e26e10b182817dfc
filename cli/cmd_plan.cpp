#include "cli/run_options.hpp"
#include "zpolicy/json.hpp"

namespace zpolicy::cli {
namespace {

void print_plan_text(const Plan& plan) {
  std::cout << "backend: " << plan.backend << "\nexe: " << plan.exe << "\ncwd: " << plan.cwd
            << "\ntimeout: "
            << (plan.timeout_ms ? std::to_string(*plan.timeout_ms) + " ms, then SIGTERM and " +
                                      std::to_string(plan.timeout_grace_ms.value_or(0)) +
                                      " ms of grace before SIGKILL"
                                : std::string("none"))
            << "\nargv:\n";
  for (const auto& a : plan.argv) std::cout << "  " << a << "\n";
  std::cout << "env:\n";
  for (const auto& e : plan.env) std::cout << "  " << e << "\n";
  std::cout << "exe env:" << (plan.exe_env.empty() ? " none" : "") << "\n";
  for (const auto& e : plan.exe_env) std::cout << "  " << e << "\n";
  for (const auto& f : plan.fds)
    std::cout << "fd " << f.fd << ": " << f.artifact << " (" << f.content.size()
              << " bytes, read at the " << f.when << ")\n";
  if (plan.status_fd)
    std::cout << "fd " << *plan.status_fd << ": status (the write end of a pipe)\n";
  if (plan.block_fd)
    std::cout << "fd " << *plan.block_fd
              << ": block (the read end of a pipe; one byte once every setup check holds)\n";
  for (const auto& p : plan.placeholders)
    std::cout << "placeholder: " << p.path << " (in " << p.root << ")\n";
  for (const auto& c : plan.setup_checks) {
    std::cout << "setup check: " << c.path << " is " << c.kind;
    if (c.fd) std::cout << " of fd " << *c.fd;
    if (!c.link_target.empty()) std::cout << " to " << c.link_target;
    std::cout << (c.read_only ? ", read-only" : "") << "\n";
  }
  for (const auto& l : plan.accepted) std::cout << "accepted: " << l << "\n";
  if (const auto& proxy = plan.network_proxy) {
    std::cout << "network proxy: serve on 127.0.0.1:" << proxy->port
              << " in the sandbox's network namespace, admitting:\n";
    for (const auto& a : proxy->allow) std::cout << "  " << a << "\n";
    for (int f : proxy->forwards)
      std::cout << "network forward: 127.0.0.1:" << f << " in the sandbox to the host's 127.0.0.1:"
                << f << "\n";
  }
}

}  // namespace

int cmd_plan(const Args& args) {
  const std::string usage =
      "zpolicy plan [--policy POLICY] [--mode M] [--workspace DIR] [--timeout T] [--env NAME[=V]]... "
      "[--accept LINT]... [--format text|json] -- CMD [ARG...]";
  po::options_description opts("plan options");
  opts.add_options()("format", po::value<std::string>()->default_value("text"), "text or json");
  po::variables_map vm;
  RunRequest req;
  bool help = false;
  if (!parse_run_options(args, "plan", usage, opts, vm, req, help)) return kExitUsage;
  if (help) return kExitOk;
  const std::string format = vm["format"].as<std::string>();
  if (format != "text" && format != "json") {
    std::cerr << "zpolicy: plan: --format must be text or json, not '" << format << "'\n";
    return kExitUsage;
  }
  if (req.command.empty()) {
    std::cerr << "zpolicy: plan: no command given (" << usage << ")\n";
    return kExitUsage;
  }
  const auto planned = plan(req);
  std::cerr << planned.messages;
  if (!planned.plan) return planned.exit_code;
  if (format == "json") std::cout << plan_json(*planned.plan);
  else
    print_plan_text(*planned.plan);
  return kExitOk;
}

}  // namespace zpolicy::cli
