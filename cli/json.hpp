#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/pipeline.hpp"

namespace zpolicy::cli {

std::string json_string(std::string_view s);

// {"target": ..., "artifacts": {"name": "text" | {"base64": "..."}}} with sorted names.
std::string artifacts_json(const std::string& target,
                           const std::vector<compiler::Artifact>& arts);

}  // namespace zpolicy::cli
