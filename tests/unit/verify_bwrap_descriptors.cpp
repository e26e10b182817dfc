#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <string>
#include <utility>

#include "compiler/analyzer/bwrap/bwrap_argv.hpp"
#include "compiler/analyzer/bwrap/verify_bwrap.hpp"
#include "emitters/bwrap/bwrap_emitter.hpp"
#include "verify_bwrap_fixture.hpp"

// The argv a run executes binds by descriptor (`--bind-fd FD DEST`, bwrap.fds says which
// host path FD holds): the verifier replays each descriptor as the path the table names,
// so a table that names another path is checked like any other source, and a table or
// argv that does not line up is refused.
using namespace zpolicy;
using namespace zpolicy::compiler;
using test::Option;

namespace {

std::string all(const std::vector<ir::Diagnostic>& fs) {
  std::string out;
  for (const auto& f : fs) out += f.report() + "\n";
  return out;
}

// The hand-written expected argv with every bind by descriptor, from 5 up, and its table.
struct ByDescriptor {
  std::vector<Option> argv;
  std::string fds;
};

ByDescriptor by_descriptor(const std::vector<Option>& argv) {
  ByDescriptor out;
  int fd = 5;
  for (const auto& o : argv) {
    if (o[0] == "--bind" || o[0] == "--ro-bind") {
      out.argv.push_back({o[0] + "-fd", std::to_string(fd), o[2]});
      out.fds += std::to_string(fd++) + " " + o[1] + "\n";
    } else {
      out.argv.push_back(o);
    }
  }
  return out;
}

std::vector<ir::Diagnostic> verify(const ByDescriptor& d) {
  return verify_bwrap(test::workspace_policy(), test::render(d.argv), d.fds);
}

bool malformed_at(const std::vector<ir::Diagnostic>& fs, const std::string& artifact, int line,
                  const std::string& words) {
  return fs.size() == 1 && fs[0].kind == "malformed-artifact" && fs[0].loc.file == artifact &&
         fs[0].loc.line == line && fs[0].actual.find(words) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verify_bwrap_descriptors)

BOOST_AUTO_TEST_CASE(the_expected_shape_by_descriptor_verifies_clean) {
  const auto d = by_descriptor(test::workspace_argv());
  BOOST_TEST(d.fds.find("5 /\n") == 0u);
  auto fs = verify(d);
  BOOST_TEST(fs.empty(), all(fs));
}

BOOST_AUTO_TEST_CASE(a_descriptor_is_replayed_as_the_path_its_table_line_names) {
  auto parsed = parse_bwrap_args("--bind-fd\n7\n/w\n--ro-bind-fd\n9\n/w/.git\n",
                                 std::make_shared<PathTable>(), "9 /w/.git\n7 /w\n");
  BOOST_TEST_REQUIRE(parsed.has_value(), parsed.error().message);
  const auto& ops = parsed->ops;
  BOOST_TEST_REQUIRE(ops.size() == 2u);
  BOOST_TEST((ops[0].kind == BwrapOpKind::Bind));
  BOOST_TEST(parsed->paths->path(*ops[0].source).str() == "/w");
  BOOST_TEST((ops[0].source_fd == std::optional<int>(7)));
  BOOST_TEST((ops[1].kind == BwrapOpKind::RoBind));
  BOOST_TEST(parsed->paths->path(*ops[1].source).str() == "/w/.git");
  BOOST_TEST(ops[1].text == "--ro-bind-fd 9 /w/.git (/w/.git)");
}

// The mapping is verified, not trusted: the workspace's descriptor holding $HOME makes
// $HOME writable at the workspace's place, which the probes see.
BOOST_AUTO_TEST_CASE(a_table_naming_another_source_is_a_finding) {
  auto d = by_descriptor(test::workspace_argv());
  const std::string ws_line = "6 ${WORKSPACE}\n";
  BOOST_TEST_REQUIRE(d.fds.find(ws_line) != std::string::npos);
  d.fds.replace(d.fds.find(ws_line), ws_line.size(), "6 ${HOME}\n");
  auto fs = verify(d);
  BOOST_TEST(!fs.empty());
  BOOST_TEST(all(fs).find("--bind-fd 6 ${WORKSPACE} (${HOME})") != std::string::npos, all(fs));
}

BOOST_AUTO_TEST_CASE(a_bind_by_path_left_in_a_run_argv_is_missing_hardening) {
  auto d = by_descriptor(test::workspace_argv());
  const std::string w = "${WORKSPACE}";
  std::replace(d.argv.begin(), d.argv.end(), Option{"--bind-fd", "6", w}, Option{"--bind", w, w});
  d.fds.erase(d.fds.find("6 " + w + "\n"), ("6 " + w + "\n").size());
  auto fs = verify(d);
  BOOST_TEST_REQUIRE(fs.size() == 1u, all(fs));
  BOOST_TEST(fs[0].kind == "missing-hardening");
  BOOST_TEST(fs[0].probe == "--bind ${WORKSPACE} ${WORKSPACE}");
  // The same argv is what `compile` writes, and fine there: no descriptor exists.
  BOOST_TEST(verify_bwrap(test::workspace_policy(), test::render(test::workspace_argv())).empty());
}

BOOST_AUTO_TEST_CASE(descriptors_and_table_that_do_not_line_up_are_refused) {
  const std::string argv = "--bind-fd\n5\n/w\n";
  auto fs = [](const std::string& args, std::optional<std::string> fds) {
    return verify_bwrap(test::workspace_policy(), args,
                        fds ? std::optional<std::string_view>(*fds) : std::nullopt);
  };
  BOOST_TEST(malformed_at(fs(argv, std::nullopt), "bwrap.args", 1, "no bwrap.fds"));
  BOOST_TEST(malformed_at(fs(argv, "6 /w\n"), "bwrap.args", 2, "not in bwrap.fds"));
  BOOST_TEST(malformed_at(fs(argv + "--ro-bind-fd\n5\n/x\n", "5 /w\n"), "bwrap.args", 5,
                          "bound twice"));
  BOOST_TEST(malformed_at(fs(argv, "5 /w\n6 /x\n"), "bwrap.fds", 2, "bound by no"));
  BOOST_TEST(malformed_at(fs(argv, "5 /w\n5 /x\n"), "bwrap.fds", 2, "listed twice"));
  BOOST_TEST(malformed_at(fs(argv + "--bind-fd\n1\n/y\n", "5 /w\n1 /y\n"), "bwrap.fds", 2,
                          "standard"));
  BOOST_TEST(malformed_at(fs(argv + "--seccomp\n5\n", "5 /w\n"), "bwrap.fds", 1, "--seccomp"));
  BOOST_TEST(malformed_at(fs(argv, "5 w\n"), "bwrap.fds", 1, "not an absolute path"));
  BOOST_TEST(malformed_at(fs(argv, "5\n"), "bwrap.fds", 1, "FD PATH"));
  BOOST_TEST(malformed_at(fs("--bind-fd\nx\n/w\n", "5 /w\n"), "bwrap.args", 2,
                          "not a file descriptor"));
}

// What the emitter writes for a run is what the verifier accepts, and a compile keeps
// its bind-by-path form.
BOOST_AUTO_TEST_CASE(the_emitted_descriptor_form_verifies_clean) {
  namespace bw = emitters::bwrap;
  const ir::Resolved r = test::workspace_policy();
  const auto emitted = bw::emit(r, bw::BindForm::Descriptor);
  BOOST_TEST(std::count(emitted.args.begin(), emitted.args.end(), "--bind") == 0);
  BOOST_TEST(std::count(emitted.args.begin(), emitted.args.end(), "--ro-bind") == 0);
  BOOST_TEST_REQUIRE(!emitted.sources.empty());
  BOOST_TEST(emitted.sources.front().fd == bw::kFirstBindFd);
  BOOST_TEST(bw::sources_text(emitted.sources).find("5 /\n") == 0u);
  auto fs = verify_bwrap(r, bw::args_text(emitted.args), bw::sources_text(emitted.sources));
  BOOST_TEST(fs.empty(), all(fs));
  const auto path_form = bw::emit(r, bw::BindForm::Path);
  BOOST_TEST(path_form.sources.empty());
  BOOST_TEST((path_form.args == bw::emit_args(r)));
}

BOOST_AUTO_TEST_SUITE_END()
