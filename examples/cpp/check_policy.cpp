// `zpolicy check POLICY` through the C++ API, found with find_package(zpolicy): prints
// every diagnostic and exits with the same code as the command line.
#include <zpolicy/zpolicy.hpp>

#include <iostream>

int main(int argc, char** argv) {
  zpolicy::Request request;
  if (argc > 1) request.policy_file = argv[1];
  const zpolicy::Result result = zpolicy::check(request);
  for (const auto& d : result.diagnostics) std::cout << d.str();
  std::cout << "zpolicy " << ZPOLICY_VERSION << ": exit " << result.exit_code << "\n";
  return result.exit_code;
}
