// The C API over the C++ one. No exception crosses it: an internal failure is a result
// with exit code 125 and its reason as a diagnostic.
#include <new>

#include "zpolicy/json.hpp"
#include "zpolicy/zpolicy.h"
#include "zpolicy/zpolicy.hpp"

struct zpolicy_request {
  zpolicy::Request request;
};

struct zpolicy_result {
  zpolicy::Result result;
  std::vector<std::string> texts;  // Diagnostic::str() of each, kept for the caller
};

namespace {

zpolicy_result* wrap(zpolicy::Result&& r) {
  auto* out = new (std::nothrow) zpolicy_result{std::move(r), {}};
  if (!out) return nullptr;
  try {
    for (const auto& d : out->result.diagnostics) out->texts.push_back(d.str());
  } catch (...) {
    delete out;
    return nullptr;
  }
  return out;
}

template <typename F>
zpolicy_result* guarded(F&& f) {
  try {
    return wrap(f());
  } catch (const std::exception& e) {
    zpolicy::Result r;
    r.exit_code = zpolicy::kExitInternal;
    try {
      r.diagnostics.push_back({"", zpolicy::Severity::Error, "<zpolicy>", 0, 0,
                               std::string("internal error: ") + e.what(), {}});
      return wrap(std::move(r));
    } catch (...) {
      return nullptr;
    }
  } catch (...) {
    return nullptr;
  }
}

const zpolicy::Diagnostic* diagnostic(const zpolicy_result* r, size_t i) {
  return r && i < r->result.diagnostics.size() ? &r->result.diagnostics[i] : nullptr;
}

const zpolicy::Artifact* artifact(const zpolicy_result* r, size_t i) {
  return r && i < r->result.artifacts.size() ? &r->result.artifacts[i] : nullptr;
}

zpolicy::Target target_of(int t) {
  return t == ZPOLICY_TARGET_MACOS ? zpolicy::Target::Macos : zpolicy::Target::Linux;
}

template <typename Setter>
int set(zpolicy_request* request, const char* value, Setter&& setter) {
  if (!request || !value) return -1;
  try {
    setter(request->request, value);
    return 0;
  } catch (...) {
    return -1;
  }
}

}  // namespace

extern "C" {

const char* zpolicy_version(void) { return ZPOLICY_VERSION; }

zpolicy_request* zpolicy_request_new(void) { return new (std::nothrow) zpolicy_request{}; }

void zpolicy_request_free(zpolicy_request* request) { delete request; }

int zpolicy_request_set_policy_file(zpolicy_request* request, const char* path) {
  return set(request, path, [](zpolicy::Request& r, const char* v) {
    r.policy_file = v;
    r.policy_text.reset();
  });
}

int zpolicy_request_set_policy_text(zpolicy_request* request, const char* text, size_t length,
                                    const char* name) {
  if (!name) return -1;
  return set(request, text, [&](zpolicy::Request& r, const char* v) {
    r.policy_text = std::string(v, length);
    r.policy_name = name;
    r.policy_file.reset();
  });
}

int zpolicy_request_set_mode(zpolicy_request* request, const char* mode) {
  return set(request, mode, [](zpolicy::Request& r, const char* v) { r.mode = v; });
}

int zpolicy_request_set_workspace(zpolicy_request* request, const char* directory) {
  return set(request, directory, [](zpolicy::Request& r, const char* v) { r.workspace = v; });
}

zpolicy_result* zpolicy_compile(const zpolicy_request* request, int target) {
  if (!request) return nullptr;
  return guarded([&] { return zpolicy::compile(request->request, target_of(target)); });
}

zpolicy_result* zpolicy_check(const zpolicy_request* request) {
  if (!request) return nullptr;
  return guarded([&] { return zpolicy::check(request->request); });
}

zpolicy_result* zpolicy_verify(const zpolicy_request* request, int target,
                               const char* const* names, const char* const* contents,
                               const size_t* lengths, size_t count) {
  if (!request || (count && (!names || !contents || !lengths))) return nullptr;
  return guarded([&] {
    std::vector<zpolicy::Artifact> arts;
    for (size_t i = 0; i < count; ++i) {
      const std::string name = names[i] ? names[i] : "";
      arts.push_back({name, std::string(contents[i] ? contents[i] : "", contents[i] ? lengths[i] : 0),
                      name.ends_with(".bpf")});
    }
    return zpolicy::verify(request->request, target_of(target), arts);
  });
}

namespace {

// A review result as a C result: its table as the one artifact, the reasons as diagnostics.
zpolicy::Result review_result(const zpolicy::DiffResult& r, const char* format_name,
                              int exit_code) {
  zpolicy::Result result;
  const std::string name = format_name ? format_name : "text";
  const auto format = zpolicy::parse_diff_format(name);
  if (!format) {
    result.exit_code = zpolicy::kExitUsage;
    result.diagnostics.push_back({"", zpolicy::Severity::Error, "<command line>", 0, 0,
                                  "invalid format '" + name + "' (expected text, json or markdown)",
                                  {}});
    return result;
  }
  result.exit_code = r.exit_code == zpolicy::kExitUsage ? zpolicy::kExitUsage : exit_code;
  result.diagnostics = r.diagnostics;
  if (r.exit_code != zpolicy::kExitUsage) {
    const char* file = *format == zpolicy::DiffFormat::Json       ? "diff.json"
                       : *format == zpolicy::DiffFormat::Markdown ? "diff.md"
                                                                  : "diff.txt";
    result.artifacts.push_back({file, zpolicy::render_diff(r, *format), false});
  }
  return result;
}

}  // namespace

zpolicy_result* zpolicy_diff(const zpolicy_request* before, const zpolicy_request* after,
                             const char* format, int widen_only) {
  if (!before || !after) return nullptr;
  return guarded([&] {
    const auto r = zpolicy::diff(before->request, after->request);
    const int code = widen_only ? (r.widenings() ? zpolicy::kExitDifference : zpolicy::kExitOk)
                                : r.exit_code;
    return review_result(r, format, code);
  });
}

zpolicy_result* zpolicy_check_within(const zpolicy_request* policy,
                                     const zpolicy_request* ceiling, const char* format) {
  if (!policy || !ceiling) return nullptr;
  return guarded([&] {
    const auto r = zpolicy::check_within(policy->request, ceiling->request);
    return review_result(r, format, r.exit_code);
  });
}

zpolicy_result* zpolicy_plan(const zpolicy_request* request, const char* const* command,
                             size_t count) {
  if (!request || !command || count == 0) return nullptr;
  return guarded([&] {
    zpolicy::Result result;
    const auto& req = request->request;
    if (req.policy_text) {
      result.exit_code = zpolicy::kExitUsage;
      result.diagnostics.push_back({"", zpolicy::Severity::Error, req.policy_name, 0, 0,
                                    "a run plan needs the policy as a file (the lints judge "
                                    "where it lies); set it with zpolicy_request_set_policy_file",
                                    {}});
      return result;
    }
    zpolicy::RunRequest run;
    run.policy_file = req.policy_file;
    run.mode = req.mode;
    run.workspace = req.workspace;
    for (size_t i = 0; i < count; ++i) run.command.emplace_back(command[i] ? command[i] : "");
    auto planned = zpolicy::plan(run);
    result.exit_code = planned.exit_code;
    if (!planned.messages.empty())
      result.diagnostics.push_back({"", planned.plan ? zpolicy::Severity::Note : zpolicy::Severity::Error,
                                    "<zpolicy>", 0, 0, planned.messages, {}});
    if (planned.plan) result.artifacts.push_back({"plan.json", zpolicy::plan_json(*planned.plan), false});
    return result;
  });
}

int zpolicy_result_exit_code(const zpolicy_result* r) {
  return r ? r->result.exit_code : zpolicy::kExitInternal;
}

size_t zpolicy_result_diagnostic_count(const zpolicy_result* r) {
  return r ? r->result.diagnostics.size() : 0;
}

const char* zpolicy_result_diagnostic_text(const zpolicy_result* r, size_t i) {
  return diagnostic(r, i) ? r->texts[i].c_str() : nullptr;
}

const char* zpolicy_result_diagnostic_code(const zpolicy_result* r, size_t i) {
  auto* d = diagnostic(r, i);
  return d ? d->code.c_str() : nullptr;
}

const char* zpolicy_result_diagnostic_message(const zpolicy_result* r, size_t i) {
  auto* d = diagnostic(r, i);
  return d ? d->message.c_str() : nullptr;
}

const char* zpolicy_result_diagnostic_file(const zpolicy_result* r, size_t i) {
  auto* d = diagnostic(r, i);
  return d ? d->file.c_str() : nullptr;
}

int zpolicy_result_diagnostic_line(const zpolicy_result* r, size_t i) {
  auto* d = diagnostic(r, i);
  return d ? d->line : -1;
}

int zpolicy_result_diagnostic_column(const zpolicy_result* r, size_t i) {
  auto* d = diagnostic(r, i);
  return d ? d->column : -1;
}

int zpolicy_result_diagnostic_severity(const zpolicy_result* r, size_t i) {
  auto* d = diagnostic(r, i);
  if (!d) return -1;
  switch (d->severity) {
    case zpolicy::Severity::Note:
      return ZPOLICY_NOTE;
    case zpolicy::Severity::Warning:
      return ZPOLICY_WARNING;
    case zpolicy::Severity::Error:
      return ZPOLICY_ERROR;
  }
  return ZPOLICY_ERROR;
}

size_t zpolicy_result_artifact_count(const zpolicy_result* r) {
  return r ? r->result.artifacts.size() : 0;
}

const char* zpolicy_result_artifact_name(const zpolicy_result* r, size_t i) {
  auto* a = artifact(r, i);
  return a ? a->name.c_str() : nullptr;
}

const char* zpolicy_result_artifact_data(const zpolicy_result* r, size_t i, size_t* length) {
  auto* a = artifact(r, i);
  if (length) *length = a ? a->content.size() : 0;
  return a ? a->content.data() : nullptr;
}

void zpolicy_result_free(zpolicy_result* r) { delete r; }

}  // extern "C"
