#include "cli/options.hpp"

#include <cctype>

#include "compiler/frontend/default_policy.hpp"
#include "compiler/frontend/policy_parser.hpp"

namespace zpolicy::cli {

bool parse_options(const Args& args, const std::string& usage, po::options_description& opts,
                   const po::positional_options_description& positional, po::variables_map& vm,
                   bool& help_shown) {
  opts.add_options()("help,h", "show this help");
  help_shown = false;
  try {
    po::store(po::command_line_parser(args).options(opts).positional(positional).run(), vm);
    // Help comes before the required-option check: `compile --help` has no POLICY.
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n" << opts;
      help_shown = true;
      return true;
    }
    po::notify(vm);
  } catch (const po::required_option& e) {
    // Boost names the option ("--policy"), but users give these positionally (POLICY).
    std::string name = e.get_option_name();
    name.erase(0, name.find_first_not_of('-'));
    bool is_positional = false;
    for (unsigned i = 0; i < positional.max_total_count() && i < 8; ++i)
      is_positional |= positional.name_for_position(i) == name;
    if (is_positional) {
      for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      std::cerr << "zpolicy: missing the " << name << " argument\nusage: " << usage << "\n";
    } else {
      std::cerr << "zpolicy: " << e.what() << "\nusage: " << usage << "\n";
    }
    return false;
  } catch (const po::error& e) {
    std::cerr << "zpolicy: " << e.what() << "\nusage: " << usage << "\n";
    return false;
  }
  return true;
}

std::optional<ir::Policy> load_policy(const std::string& path, ir::Diagnostics& diags) {
  if (path.empty()) return compiler::default_policy();
  return compiler::load_policy_file(path, diags);
}

std::optional<ir::Mode> mode_option(const po::variables_map& vm, ir::Diagnostics& diags) {
  if (!vm.count("mode")) return std::nullopt;
  auto text = vm["mode"].as<std::string>();
  auto m = ir::parse_mode(text);
  if (!m)
    diags.error({"<command line>"}, "invalid --mode '" + text +
                                        "' (expected read-only, workspace-write or "
                                        "danger-full-access)");
  return m;
}

std::optional<PolicyRequest> load_request(const po::variables_map& vm, ir::Diagnostics& diags) {
  auto requested = mode_option(vm, diags);
  auto policy = load_policy(vm["policy"].as<std::string>(), diags);
  std::optional<compiler::HostFacts> host;
  if (policy && !diags.has_errors() && vm.count("workspace"))
    host = compiler::host_facts(vm["workspace"].as<std::string>(), diags);
  std::optional<ir::Mode> mode;
  if (policy && !diags.has_errors()) mode = compiler::effective_mode(*policy, requested, diags);
  if (!mode || diags.has_errors()) return std::nullopt;
  return PolicyRequest{std::move(*policy), *mode, std::move(host)};
}

void print_diagnostics(const ir::Diagnostics& diags) { std::cerr << diags.str(); }

void print_findings(const std::vector<compiler::Finding>& findings) {
  for (const auto& f : findings) std::cerr << f.str() << "\n";
  std::cerr << "zpolicy: verification failed: " << findings.size()
            << (findings.size() == 1 ? " finding" : " findings")
            << "; nothing was written\n";
}

}  // namespace zpolicy::cli
