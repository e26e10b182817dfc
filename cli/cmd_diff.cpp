#include "cli/artifact_files.hpp"
#include "cli/options.hpp"

namespace zpolicy::cli {
namespace {

// As git's external diff driver (`diff.<driver>.command`) calls it: PATH OLD-FILE OLD-HEX
// OLD-MODE NEW-FILE NEW-HEX NEW-MODE (two more for a rename). A side git gives as
// /dev/null (a policy file added or removed) is the built-in default policy, which is
// what `run` uses where there is no policy file.
Request git_side(const std::string& file) {
  Request r;
  if (file != "/dev/null") r.policy_file = file;
  return r;
}

}  // namespace

int cmd_diff(const Args& args) {
  const std::string usage =
      "zpolicy diff OLD NEW [--format text|json|markdown] [--fail-on any|widen]\n"
      "       zpolicy diff --artifacts OLD-DIR NEW-DIR [--target linux] [--format ...] [--fail-on ...]\n"
      "       zpolicy diff --git PATH OLD-FILE OLD-HEX OLD-MODE NEW-FILE NEW-HEX NEW-MODE";
  po::options_description opts("diff options");
  opts.add_options()("files", po::value<std::vector<std::string>>(), "OLD NEW")(
      "format", po::value<std::string>()->default_value("text"), "text, json or markdown")(
      "fail-on", po::value<std::string>()->default_value("any"),
      "any: exit 1 on any difference; widen: only on a widening")(
      "git", po::bool_switch(), "called as git's diff driver: print the table, exit 0")(
      "artifacts", po::bool_switch(),
      "compare two compiled artifact directories by what they do (read back by the analyzer)")(
      "target", po::value<std::string>()->default_value("linux"), "with --artifacts: the target");
  po::positional_options_description pos;
  pos.add("files", -1);
  po::variables_map vm;
  bool help = false;
  if (!parse_options(args, usage, opts, pos, vm, help)) return kExitUsage;
  if (help) return kExitOk;
  const auto files = vm.count("files") ? vm["files"].as<std::vector<std::string>>()
                                       : std::vector<std::string>{};
  const bool git = vm["git"].as<bool>();
  const bool artifacts = vm["artifacts"].as<bool>();
  const auto target = parse_target(vm["target"].as<std::string>());
  const auto format = parse_diff_format(vm["format"].as<std::string>());
  const std::string fail_on = vm["fail-on"].as<std::string>();
  std::vector<Diagnostic> errors;
  if (!format) errors.push_back(usage_error("invalid --format (expected text, json or markdown)"));
  if (fail_on != "any" && fail_on != "widen")
    errors.push_back(usage_error("invalid --fail-on (expected any or widen)"));
  if (git ? files.size() != 7 && files.size() != 9 : files.size() != 2)
    errors.push_back(usage_error(git         ? "--git takes the 7 (or 9) arguments git gives a diff driver"
                                 : artifacts ? "diff --artifacts takes two artifact directories, OLD and NEW"
                                             : "diff takes two policy files, OLD and NEW"));
  if (git && artifacts) errors.push_back(usage_error("--git compares policy files; drop --artifacts"));
  if (!target) errors.push_back(usage_error("invalid --target (expected linux or macos)"));
  if (!vm["target"].defaulted() && !artifacts)
    errors.push_back(usage_error("--target goes with --artifacts (a policy diff covers every target)"));
  if (!errors.empty()) {
    print_diagnostics(errors);
    std::cerr << "usage: " << usage << "\n";
    return kExitUsage;
  }
  if (artifacts) {
    std::vector<std::string> refused;
    auto before_arts = read_artifacts(files[0], *target, refused);
    auto after_arts = read_artifacts(files[1], *target, refused);
    if (!refused.empty()) {
      for (const auto& r : refused) std::cerr << "zpolicy: " << r << "\n";
      std::cerr << "zpolicy: cannot compare the artifact directories; nothing was compared\n";
      return kExitUsage;
    }
    DiffResult result = diff_artifacts(*target, before_arts, after_arts);
    // Lines and reasons name the directories as the user gave them.
    auto relabel = [&](std::string& file) {
      for (const auto& [side, dir] : {std::pair{result.before, files[0]}, {result.after, files[1]}})
        if (file == side || file.starts_with(side + "/")) {
          file = dir + file.substr(side.size());
          return;
        }
    };
    for (auto& d : result.differences) {
      relabel(d.before.line.file);
      relabel(d.after.line.file);
    }
    for (auto& d : result.diagnostics) relabel(d.file);
    result.before = files[0];
    result.after = files[1];
    if (result.exit_code == kExitUsage) {
      print_diagnostics(result.diagnostics);
      return kExitUsage;
    }
    std::cout << render_diff(result, *format);
    if (fail_on == "widen") return result.widenings() ? kExitDifference : kExitOk;
    return result.exit_code;
  }
  Request before, after;
  if (git) {
    before = git_side(files[1]);
    after = git_side(files[4]);
  } else {
    before.policy_file = files[0];
    after.policy_file = files[1];
  }
  DiffResult result = diff(before, after);
  if (git) {
    // git stops at a driver that exits non-zero, so the reasons go where the reviewer
    // reads: in the diff.
    const std::string& path = files[0];
    // Git hands the old side over as a temporary file: name lines as `git diff` does.
    auto relabel = [&](std::string& file) {
      if (file == files[1]) file = "a/" + path;
      else if (file == files[4]) file = "b/" + path;
    };
    for (auto& d : result.differences) {
      relabel(d.before.line.file);
      relabel(d.after.line.file);
    }
    for (auto& d : result.diagnostics) relabel(d.file);
    result.before = "a/" + path + (before.policy_file ? "" : " (absent: the built-in default)");
    result.after = "b/" + path + (after.policy_file ? "" : " (absent: the built-in default)");
    std::cout << "zpolicy diff a/" << path << " b/" << path << "\n";
    if (result.exit_code == kExitUsage) {
      std::cout << "cannot compare, a side is not a valid policy:\n";
      for (const auto& d : result.diagnostics) std::cout << d.str();
      return kExitOk;
    }
    std::cout << render_diff(result, *format);
    return kExitOk;
  }
  if (result.exit_code == kExitUsage) {
    print_diagnostics(result.diagnostics);
    return kExitUsage;
  }
  std::cout << render_diff(result, *format);
  if (fail_on == "widen") return result.widenings() ? kExitDifference : kExitOk;
  return result.exit_code;
}

}  // namespace zpolicy::cli
