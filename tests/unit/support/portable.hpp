#pragma once

#include <boost/test/unit_test.hpp>
#include <utility>

#include "compiler/resolve/resolve.hpp"

namespace zpolicy::test {

// compiler::resolve_portable of a policy the test expects to resolve.
inline ir::Resolved portable(const ir::Policy& policy, ir::Mode mode) {
  ir::Diagnostics diags;
  auto r = compiler::resolve_portable(policy, mode, diags);
  BOOST_TEST_REQUIRE(r.has_value(), diags.str());
  return std::move(*r);
}

}  // namespace zpolicy::test
