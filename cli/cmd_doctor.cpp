#include <iostream>

#include "zpolicy/json.hpp"
#include "cli/options.hpp"

namespace zpolicy::cli {
namespace {

void print_doctor_text(const DoctorReport& report) {
  std::cout << report.backend << "\n";
  for (const auto& c : report.checks) {
    std::cout << c.status << "\t" << c.id << ": " << c.value;
    if (!c.reason.empty()) std::cout << " [" << c.reason << "]";
    std::cout << "\n";
    if (!c.fix.empty()) std::cout << "\tfix: " << c.fix << "\n";
  }
  std::cout << "status: " << report.status << "\n";
}

void print_json(const DoctorReport& report) {
  std::cout << "{\"backend\": " << json_string(report.backend)
            << ", \"usable\": " << (report.usable ? "true" : "false")
            << ", \"reason\": " << json_string(report.reason) << ", \"checks\": [";
  const char* sep = "";
  for (const auto& c : report.checks) {
    std::cout << sep << "{\"id\": " << json_string(c.id) << ", \"status\": "
              << json_string(c.status) << ", \"value\": " << json_string(c.value)
              << ", \"reason\": " << json_string(c.reason) << ", \"fix\": " << json_string(c.fix)
              << "}";
    sep = ", ";
  }
  std::cout << "]}\n";
}

}  // namespace

int cmd_doctor(const Args& args) {
  const std::string usage = "zpolicy doctor [--format text|json]";
  po::options_description opts("doctor options");
  opts.add_options()("format", po::value<std::string>()->default_value("text"), "text | json");
  po::variables_map vm;
  bool help = false;
  if (!parse_options(args, usage, opts, {}, vm, help)) return kExitUsage;
  if (help) return kExitOk;
  const std::string format = vm["format"].as<std::string>();
  if (format != "text" && format != "json") {
    std::cerr << "zpolicy: doctor: --format must be text or json, not '" << format << "'\n";
    return kExitUsage;
  }
  const auto report = doctor();
  if (format == "json")
    print_json(report);
  else
    print_doctor_text(report);
  return report.usable ? kExitOk : kExitUnavailable;
}

}  // namespace zpolicy::cli
