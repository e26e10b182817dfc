#include "zpolicy/json.hpp"

#include <algorithm>
#include <cstdio>

namespace zpolicy {

namespace {

size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  // Overlong forms, UTF-16 surrogates and code points above U+10FFFF are not UTF-8.
  const unsigned char d = byte(i + 1);
  if ((c == 0xe0 && d < 0xa0) || (c == 0xed && d > 0x9f) || (c == 0xf0 && d < 0x90) ||
      (c == 0xf4 && d > 0x8f))
    return 0;
  return n;
}

}  // namespace

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      // JSON is UTF-8: a byte that is not (a host path's, say) becomes U+FFFD.
      out += "\\ufffd";
      ++i;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out + "\"";
}

std::string uri_reference(std::string_view path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

namespace {

std::string base64(std::string_view in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                 (static_cast<unsigned char>(in[i + 1]) << 8) | static_cast<unsigned char>(in[i + 2]);
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += i + 1 < in.size() ? t[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace

std::string artifacts_json(const std::string& target,
                           const std::vector<Artifact>& arts) {
  std::vector<const Artifact*> sorted;
  for (const auto& a : arts) sorted.push_back(&a);
  std::sort(sorted.begin(), sorted.end(),
            [](auto* a, auto* b) { return a->name < b->name; });
  std::string out = "{\"target\": " + json_string(target) + ", \"artifacts\": {";
  for (size_t i = 0; i < sorted.size(); ++i) {
    const auto& a = *sorted[i];
    out += (i ? ", " : "") + json_string(a.name) + ": ";
    // Text that is not UTF-8 (a bound artifact naming such a host path) travels as bytes,
    // so that the JSON form holds exactly what --out would write.
    const bool as_bytes = a.binary || !valid_utf8(a.content);
    out += as_bytes ? "{\"base64\": \"" + base64(a.content) + "\"}" : json_string(a.content);
  }
  return out + "}}\n";
}

namespace {

// A plan string: JSON text when it is UTF-8, else its bytes.
std::string plan_string(std::string_view s) {
  return valid_utf8(s) ? json_string(s) : "{\"base64\": \"" + base64(s) + "\"}";
}

std::string plan_strings(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + plan_string(v[i]);
  return out + "]";
}

}  // namespace

std::string plan_json(const Plan& plan) {
  std::string out = "{\"zpolicy_plan\": 7";
  out += ", \"backend\": " + json_string(plan.backend);
  out += ", \"exe\": " + plan_string(plan.exe);
  out += ", \"argv\": " + plan_strings(plan.argv);
  out += ", \"env\": " + plan_strings(plan.env);
  out += ", \"exe_env\": " + plan_strings(plan.exe_env);
  out += ", \"cwd\": " + plan_string(plan.cwd);
  out += ", \"fds\": [";
  for (size_t i = 0; i < plan.fds.size(); ++i) {
    const auto& f = plan.fds[i];
    out += std::string(i ? ", " : "") + "{\"fd\": " + std::to_string(f.fd) +
           ", \"artifact\": " + json_string(f.artifact) + ", \"when\": " + json_string(f.when) +
           ", \"content\": {\"base64\": \"" +
           base64(f.content) + "\"}}";
  }
  out += "], \"status_fd\": " + (plan.status_fd ? std::to_string(*plan.status_fd) : "null");
  out += ", \"block_fd\": " + (plan.block_fd ? std::to_string(*plan.block_fd) : "null");
  out += ", \"setup_checks\": [";
  for (size_t i = 0; i < plan.setup_checks.size(); ++i) {
    const auto& c = plan.setup_checks[i];
    out += std::string(i ? ", " : "") + "{\"path\": " + plan_string(c.path) +
           ", \"kind\": " + json_string(c.kind) +
           ", \"fd\": " + (c.fd ? std::to_string(*c.fd) : "null") +
           ", \"read_only\": " + (c.read_only ? "true" : "false") +
           ", \"link_target\": " + plan_string(c.link_target) + "}";
  }
  out += "]";
  out += ", \"placeholders\": [";
  for (size_t i = 0; i < plan.placeholders.size(); ++i)
    out += std::string(i ? ", " : "") + "{\"path\": " + plan_string(plan.placeholders[i].path) +
           ", \"root\": " + plan_string(plan.placeholders[i].root) + "}";
  out += "], \"binds\": [";
  for (size_t i = 0; i < plan.binds.size(); ++i) {
    const auto& b = plan.binds[i];
    auto number = [](const std::optional<unsigned long long>& v) {
      return v ? std::to_string(*v) : std::string("null");
    };
    out += std::string(i ? ", " : "") + "{\"fd\": " + std::to_string(b.fd) +
           ", \"path\": " + plan_string(b.path) + ", \"dev\": " + number(b.dev) +
           ", \"ino\": " + number(b.ino) + "}";
  }
  out += "], \"watches\": [";
  for (size_t i = 0; i < plan.watches.size(); ++i) {
    const auto& w = plan.watches[i];
    out += std::string(i ? ", " : "") + "{\"directory\": " + plan_string(w.directory) +
           ", \"name\": " + plan_string(w.name) + ", \"protects\": " + plan_string(w.protects) +
           ", \"on\": " + json_string(w.on) + "}";
  }
  out += "], \"missing_deny_roots\": " + plan_strings(plan.missing_deny_roots);
  out += ", \"notify_share\": ";
  if (const auto& n = plan.notify_share)
    out += "{\"inotify_instances\": " + std::to_string(n->inotify_instances) +
           ", \"inotify_watches\": " + std::to_string(n->inotify_watches) +
           ", \"fanotify_groups\": " + std::to_string(n->fanotify_groups) +
           ", \"fanotify_marks\": " + std::to_string(n->fanotify_marks) + "}";
  else
    out += "null";
  out += std::string(", \"private_mounts\": ") + (plan.private_mounts ? "true" : "false");
  out += ", \"timeout_ms\": " + (plan.timeout_ms ? std::to_string(*plan.timeout_ms) : "null");
  out += ", \"timeout_grace_ms\": " +
         (plan.timeout_grace_ms ? std::to_string(*plan.timeout_grace_ms) : "null");
  out += ", \"sbpl_profile\": " + plan_string(plan.sbpl_profile);
  out += ", \"sbpl_params\": [";
  for (size_t i = 0; i < plan.sbpl_params.size(); ++i)
    out += std::string(i ? ", " : "") + "[" + plan_string(plan.sbpl_params[i].first) + ", " +
           plan_string(plan.sbpl_params[i].second) + "]";
  out += "], \"accepted\": " + plan_strings(plan.accepted);
  out += ", \"network_proxy\": ";
  if (const auto& proxy = plan.network_proxy) {
    out += "{\"port\": " + std::to_string(proxy->port) + ", \"allow\": [";
    for (size_t i = 0; i < proxy->allow.size(); ++i)
      out += (i ? ", " : "") + json_string(proxy->allow[i]);
    out += "], \"forwards\": [";
    for (size_t i = 0; i < proxy->forwards.size(); ++i)
      out += (i ? ", " : "") + std::to_string(proxy->forwards[i]);
    out += "]}";
  } else {
    out += "null";
  }
  return out + "}\n";
}

std::string run_status_json(const RunStatus& status) {
  std::string out =
      "{\"zpolicy_run_status\": 1, \"exit_code\": " + std::to_string(status.exit_code);
  out += ", \"network_refusals\": [";
  for (size_t i = 0; i < status.network_refusals.size(); ++i) {
    const auto& r = status.network_refusals[i];
    out += std::string(i ? ", " : "") + "{\"host\": " + json_string(r.host) +
           ", \"port\": " + std::to_string(r.port) + ", \"reason\": " + json_string(r.reason) +
           ", \"detail\": " + json_string(r.detail) + "}";
  }
  return out +
         "], \"network_refusals_omitted\": " + std::to_string(status.network_refusals_omitted) +
         ", \"nothing_ran\": " + (status.nothing_ran ? "true" : "false") + "}\n";
}

}  // namespace zpolicy
