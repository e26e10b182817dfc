// `doctor`: the runner's deployment report as public values.
#include "runner/doctor.hpp"
#include "zpolicy/zpolicy.hpp"

namespace zpolicy {

DoctorReport doctor() {
  const auto report = runner::doctor();
  DoctorReport out;
  out.backend = runner::backend_description();
  out.usable = report.backend.usable();
  out.reason = runner::to_string(report.backend.reason);
  out.status = report.backend.str();
  for (const auto& c : report.checks)
    out.checks.push_back({c.id, runner::to_string(c.status), c.value, c.reason, c.fix});
  return out;
}

}  // namespace zpolicy
