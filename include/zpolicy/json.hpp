#pragma once

// The JSON zpolicy writes (`compile --format json`, `check --format json|sarif`, `doctor
// --format json`, `plan --format json`, `run --status-file`), for embedders that write the
// same documents.

#include <string>
#include <string_view>
#include <vector>

#include "zpolicy/zpolicy.hpp"

namespace zpolicy {

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
ZPOLICY_API bool valid_utf8(std::string_view s);

// `s` as a JSON string literal. JSON text is UTF-8, so each byte of `s` that is not part
// of a well-formed sequence is written as U+FFFD.
ZPOLICY_API std::string json_string(std::string_view s);

// `path` as an RFC 3986 URI reference (what SARIF's artifactLocation.uri holds): every
// byte outside the unreserved set and '/' percent-encoded.
ZPOLICY_API std::string uri_reference(std::string_view path);

// {"target": ..., "artifacts": {"name": "text" | {"base64": "..."}}} with sorted names;
// binary artifacts, and text ones that are not UTF-8, are base64.
ZPOLICY_API std::string artifacts_json(const std::string& target,
                                       const std::vector<Artifact>& arts);

// The plan as docs/embedding.md "The run plan" describes it (format version 1): one
// document, keys in a fixed order; a string that is not UTF-8 (a host path's, say) is written as
// {"base64": "..."} so that an executor gets its exact bytes.
ZPOLICY_API std::string plan_json(const Plan& plan);

// A run's status as docs/run.md "Run status" describes it (format version 1): the exit
// code and each destination the network proxy refused.
ZPOLICY_API std::string run_status_json(const RunStatus& status);

}  // namespace zpolicy
