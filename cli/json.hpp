#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zpolicy/zpolicy.hpp"

namespace zpolicy::cli {

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
bool valid_utf8(std::string_view s);

// `s` as a JSON string literal. JSON text is UTF-8, so each byte of `s` that is not part
// of a well-formed sequence is written as U+FFFD.
std::string json_string(std::string_view s);

// `path` as an RFC 3986 URI reference (what SARIF's artifactLocation.uri holds): every
// byte outside the unreserved set and '/' percent-encoded.
std::string uri_reference(std::string_view path);

// {"target": ..., "artifacts": {"name": "text" | {"base64": "..."}}} with sorted names;
// binary artifacts, and text ones that are not UTF-8, are base64.
std::string artifacts_json(const std::string& target,
                           const std::vector<Artifact>& arts);

}  // namespace zpolicy::cli
