// The three forms of a review result: a terminal's text, one JSON document, and a
// Markdown table to paste into a pull request (docs/review.md "Output").
#include "zpolicy/json.hpp"
#include "zpolicy/zpolicy.hpp"

namespace zpolicy {
namespace {

std::string targets_of(const Difference& d) {
  std::string out;
  for (auto t : d.targets) out += (out.empty() ? "" : ", ") + std::string(to_string(t));
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string where(const PolicyLine& l) {
  return l.file.empty() ? "not in the policy" : l.str();
}

// "write, create ${WORKSPACE}/.git": what the difference is about, in one phrase.
std::string what(const Difference& d) {
  if (d.operations.empty()) return d.subject;
  return joined(d.operations) + " " + d.subject;
}

std::string summary(const DiffResult& r) {
  const size_t wide = r.widenings();
  const size_t narrow = r.differences.size() - wide;
  if (r.within)
    return wide == 0 ? "within the ceiling"
                     : std::to_string(wide) + " access" + (wide == 1 ? "" : "es") +
                           " beyond the ceiling";
  if (r.differences.empty()) return "no semantic difference";
  return std::to_string(r.differences.size()) + " semantic difference" +
         (r.differences.size() == 1 ? "" : "s") + " (" + std::to_string(wide) + " widening, " +
         std::to_string(narrow) + " narrowing)";
}

std::string heading(const DiffResult& r) {
  return r.within ? r.after + " within " + r.before : r.before + " -> " + r.after;
}

std::string side_text(const DiffSide& s) {
  return s.verdict + (s.reason.empty() ? "" : " — " + s.reason) + " (" + where(s.line) + ")";
}

// A row that stands for several calls (program_diff folds calls that change alike) names
// three in its subject; each call is an access of its own, so the reader gets them all.
bool lists_calls(const Difference& d) { return d.area == "syscalls" && d.paths.size() > 1; }

// "    calls: a, b, c" wrapped before column 100, continued under the first name.
std::string calls_lines(const std::vector<std::string>& calls) {
  const std::string head = "    calls: ", indent(head.size(), ' ');
  std::string out = head, line;
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string word = calls[i] + (i + 1 < calls.size() ? "," : "");
    if (!line.empty() && head.size() + line.size() + 1 + word.size() > 100) {
      out += line + "\n" + indent;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line + "\n";
}

std::string diff_text(const DiffResult& r) {
  std::string out = heading(r) + ": " + summary(r) + "\n";
  const char* before = r.within ? "ceiling" : "before";
  const char* after = r.within ? "policy " : "after ";
  for (const auto& d : r.differences) {
    out += "\n" + std::string(d.widening ? "WIDENING " : "narrowing") + "  [" + targets_of(d) + "] " +
           (d.mode.empty() ? "" : d.mode + ": ") + d.area + ": " + what(d) + "\n";
    if (!d.path_class.empty()) out += "    path: " + d.path_class + "\n";
    if (lists_calls(d)) out += calls_lines(d.paths);
    out += "    " + std::string(before) + ": " + side_text(d.before) + "\n";
    out += "    " + std::string(after) + ": " + side_text(d.after) + "\n";
  }
  return out;
}

std::string json_side(const DiffSide& s) {
  return "{\"verdict\": " + json_string(s.verdict) + ", \"reason\": " + json_string(s.reason) +
         ", \"file\": " + json_string(s.line.file) + ", \"line\": " + std::to_string(s.line.line) +
         ", \"column\": " + std::to_string(s.line.column) + "}";
}

std::string json_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_string(v[i]);
  return out + "]";
}

std::string diff_json(const DiffResult& r) {
  std::string out = "{\"kind\": " + json_string(r.within ? "within" : "diff") +
                    ", \"before\": " + json_string(r.before) + ", \"after\": " +
                    json_string(r.after) + ", \"widenings\": " + std::to_string(r.widenings()) +
                    ", \"narrowings\": " + std::to_string(r.differences.size() - r.widenings()) +
                    ", \"differences\": [";
  for (size_t i = 0; i < r.differences.size(); ++i) {
    const auto& d = r.differences[i];
    std::vector<std::string> targets;
    for (auto t : d.targets) targets.push_back(to_string(t));
    out += std::string(i ? ", " : "") + "{\"direction\": " +
           json_string(d.widening ? "widening" : "narrowing") + ", \"targets\": " +
           json_list(targets) + (d.mode.empty() ? "" : ", \"mode\": " + json_string(d.mode)) +
           ", \"area\": " + json_string(d.area) + ", \"subject\": " + json_string(d.subject) +
           ", \"path_class\": " + json_string(d.path_class) +
           ", \"operations\": " + json_list(d.operations) + ", \"paths\": " + json_list(d.paths) +
           ", \"before\": " + json_side(d.before) +
           ", \"after\": " + json_side(d.after) + "}";
  }
  return out + "]}\n";
}

// A table cell: no line break, no column break, code spans that stay code spans.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else if (c == '`') out += '\'';
    else out += c;
  }
  return out;
}

std::string code(const std::string& s) { return s.empty() ? "" : "`" + cell(s) + "`"; }

std::string markdown(const DiffResult& r) {
  std::string out = "#### zpolicy " + std::string(r.within ? "ceiling check" : "semantic diff") +
                    ": " + code(r.within ? r.after : r.before) + (r.within ? " within " : " → ") +
                    code(r.within ? r.before : r.after) + "\n\n" + summary(r) + "\n";
  if (r.differences.empty()) return out;
  const char* before = r.within ? "ceiling" : "before";
  const char* after = r.within ? "policy" : "after";
  out += std::string("\n|  | target | ") + (r.within ? "mode | " : "") + "area | what | " + before +
         " | " + after + " |\n|---|---|" + (r.within ? "---|" : "") + "---|---|---|---|\n";
  for (const auto& d : r.differences) {
    auto side = [](const DiffSide& s) {
      return "**" + cell(s.verdict) + "** — " + cell(s.reason) + " " + code(where(s.line));
    };
    out += "| " + std::string(d.widening ? "**widening**" : "narrowing") + " | " +
           targets_of(d) + " | " + (r.within ? cell(d.mode) + " | " : "") + d.area + " | " +
           (d.operations.empty() ? "" : cell(joined(d.operations)) + " ") + code(d.subject) +
           (d.path_class.empty() ? "" : "<br>" + cell(d.path_class)) +
           (lists_calls(d) ? "<br>calls: " + cell(joined(d.paths)) : "") + " | " + side(d.before) +
           " | " + side(d.after) + " |\n";
  }
  return out;
}

}  // namespace

std::optional<DiffFormat> parse_diff_format(const std::string& name) {
  if (name == "text") return DiffFormat::Text;
  if (name == "json") return DiffFormat::Json;
  if (name == "markdown") return DiffFormat::Markdown;
  return std::nullopt;
}

std::string render_diff(const DiffResult& r, DiffFormat format) {
  switch (format) {
    case DiffFormat::Text:
      return diff_text(r);
    case DiffFormat::Json:
      return diff_json(r);
    case DiffFormat::Markdown:
      return markdown(r);
  }
  return diff_text(r);
}

}  // namespace zpolicy
