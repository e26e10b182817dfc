#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "compiler/frontend/policy_parser.hpp"
#include "ir/diagnostic.hpp"
#include "ir/policy.hpp"

namespace zpolicy::test {

struct Parsed {
  std::optional<ir::Policy> policy;
  std::string errors;  // the diagnostics exactly as the CLI prints them
};

inline Parsed parse(std::string_view text, const std::string& file = "p.yaml") {
  ir::Diagnostics diags;
  Parsed out;
  out.policy = compiler::parse_policy(text, file, diags);
  out.errors = diags.str();
  return out;
}

}  // namespace zpolicy::test
