#include "cli/options.hpp"

#include <cctype>

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

Request request_of(const po::variables_map& vm) {
  Request req;
  if (vm.count("policy")) req.policy_file = vm["policy"].as<std::string>();
  if (vm.count("mode")) req.mode = vm["mode"].as<std::string>();
  if (vm.count("workspace")) req.workspace = vm["workspace"].as<std::string>();
  return req;
}

Diagnostic usage_error(std::string message) {
  return {"", Severity::Error, "<command line>", 0, 0, std::move(message), {}};
}

void print_diagnostics(const std::vector<Diagnostic>& diags) {
  for (const auto& d : diags) std::cerr << d.str();
}

void print_findings(const std::vector<Diagnostic>& diags, const std::string& consequence) {
  size_t count = 0;
  for (const auto& d : diags) {
    if (!d.code.starts_with("verify-")) continue;
    ++count;
    std::cerr << d.file;
    if (d.line > 0) std::cerr << ":" << d.line << ":" << d.column;
    std::cerr << ": error: " << d.message << "\n";
    for (const auto& t : d.trace) std::cerr << "    " << t << "\n";
    std::cerr << "\n";
  }
  std::cerr << "zpolicy: verification failed: " << count << (count == 1 ? " finding" : " findings")
            << consequence << "\n";
}

}  // namespace zpolicy::cli
