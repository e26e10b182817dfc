// `explain`'s output: one verdict per target, the policy's rule with its line and the
// artifact's deciding line under it; Seatbelt's precedence models only on request.
#include "zpolicy/json.hpp"
#include "zpolicy/zpolicy.hpp"

namespace zpolicy {
namespace {

std::string text(const std::vector<Explanation>& explanations, bool verbose) {
  std::string out;
  for (const auto& e : explanations) {
    out += e.query + "\n";
    for (const auto& n : e.notes) out += "  note: " + n + "\n";
    for (const auto& a : e.answers) {
      out += std::string("  ") + to_string(a.target) + ": " + a.artifact + "\n";
      if (!a.policy.empty()) {
        out += "    policy:   " + a.policy + " — " + a.rule;
        const std::string line = a.line.str();
        out += line.empty() ? "\n" : " (" + line + ")\n";
      }
      for (size_t i = 0; i < a.trace.size(); ++i)
        out += (i ? "              " : "    artifact: ") + a.trace[i] + "\n";
      if (a.models_agree) continue;
      if (!verbose) {
        out += "    models:   Seatbelt's precedence models disagree here (--verbose lists them)\n";
        continue;
      }
      for (size_t i = 0; i < a.models.size(); ++i)
        out += (i ? "              " : "    models:   ") + a.models[i] + "\n";
    }
  }
  return out;
}

std::string strings(const std::vector<std::string>& list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + json_string(list[i]);
  return out + "]";
}

std::string json(const std::vector<Explanation>& explanations) {
  std::string out = "{\"explanations\": [";
  for (size_t i = 0; i < explanations.size(); ++i) {
    const auto& e = explanations[i];
    out += std::string(i ? ", " : "") + "{\"query\": " + json_string(e.query) +
           ", \"notes\": " + strings(e.notes) + ", \"answers\": [";
    for (size_t k = 0; k < e.answers.size(); ++k) {
      const auto& a = e.answers[k];
      out += std::string(k ? ", " : "") + "{\"target\": " + json_string(to_string(a.target)) +
             ", \"artifact\": " + json_string(a.artifact) + ", \"trace\": " + strings(a.trace) +
             ", \"policy\": " + json_string(a.policy) + ", \"rule\": " + json_string(a.rule) +
             ", \"line\": {\"file\": " + json_string(a.line.file) +
             ", \"line\": " + std::to_string(a.line.line) +
             ", \"column\": " + std::to_string(a.line.column) +
             "}, \"models_agree\": " + (a.models_agree ? "true" : "false") +
             ", \"models\": " + strings(a.models) + "}";
    }
    out += "]}";
  }
  return out + "]}\n";
}

}  // namespace

std::string render_explanations(const std::vector<Explanation>& explanations,
                                ExplainFormat format, bool verbose) {
  return format == ExplainFormat::Json ? json(explanations) : text(explanations, verbose);
}

}  // namespace zpolicy
