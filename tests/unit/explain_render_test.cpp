// `explain`'s rendering and `run`'s closing hint, on values built here: the cases a
// verified artifact never produces (Seatbelt models that disagree) and statuses a unit
// test cannot make a sandboxed command return.
#include <boost/test/unit_test.hpp>
#include <csignal>

#include "runner/explain_hint.hpp"
#include "zpolicy/zpolicy.hpp"

using namespace zpolicy;

namespace {

Explanation disagreeing_models() {
  Explanation e;
  e.query = "create ${WORKSPACE}/data";
  ExplainAnswer a;
  a.target = Target::Macos;
  a.policy = "either answer passes verification";
  a.rule = "directory above a protected path";
  a.artifact = "denied";
  a.trace = {"denied by rule 17 (profile.sb line 130) (deny file-write* ...)"};
  a.models_agree = false;
  a.models = {"last-match/subpath-includes-self: denied by rule 17 (profile.sb line 130)",
              "first-match/subpath-includes-self: allowed by rule 16 (profile.sb line 85)"};
  e.answers.push_back(a);
  return e;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(explain_render)

BOOST_AUTO_TEST_CASE(models_are_named_only_with_verbose_and_only_when_they_disagree) {
  const std::string head =
      "create ${WORKSPACE}/data\n"
      "  macos: denied\n"
      "    policy:   either answer passes verification — directory above a protected path\n"
      "    artifact: denied by rule 17 (profile.sb line 130) (deny file-write* ...)\n";
  const auto e = disagreeing_models();
  BOOST_TEST(render_explanations({e}, ExplainFormat::Text) ==
             head + "    models:   Seatbelt's precedence models disagree here (--verbose lists them)\n");
  BOOST_TEST(render_explanations({e}, ExplainFormat::Text, true) ==
             head +
                 "    models:   last-match/subpath-includes-self: denied by rule 17 (profile.sb "
                 "line 130)\n"
                 "              first-match/subpath-includes-self: allowed by rule 16 (profile.sb "
                 "line 85)\n");
  auto agreeing = e;
  agreeing.answers[0].models_agree = true;
  agreeing.answers[0].models.clear();
  BOOST_TEST(render_explanations({agreeing}, ExplainFormat::Text, true) == head);
}

BOOST_AUTO_TEST_CASE(json_holds_every_field_of_every_answer) {
  auto e = disagreeing_models();
  e.notes = {"a note"};
  e.answers[0].line = {"p.yaml", 7, 13};
  BOOST_TEST(render_explanations({e}, ExplainFormat::Json) ==
             "{\"explanations\": [{\"query\": \"create ${WORKSPACE}/data\", \"notes\": [\"a "
             "note\"], \"answers\": [{\"target\": \"macos\", \"artifact\": \"denied\", "
             "\"trace\": [\"denied by rule 17 (profile.sb line 130) (deny file-write* ...)\"], "
             "\"policy\": \"either answer passes verification\", \"rule\": \"directory above a "
             "protected path\", \"line\": {\"file\": \"p.yaml\", \"line\": 7, \"column\": 13}, "
             "\"models_agree\": false, \"models\": [\"last-match/subpath-includes-self: denied "
             "by rule 17 (profile.sb line 130)\", \"first-match/subpath-includes-self: allowed "
             "by rule 16 (profile.sb line 85)\"]}]}]}\n");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(run_explain_hint)

runner::RunRequest request() {
  runner::RunRequest r;
  r.policy.mode.value = ir::Mode::WorkspaceWrite;
  r.mode = ir::Mode::WorkspaceWrite;
  return r;
}

BOOST_AUTO_TEST_CASE(a_failed_command_points_to_explain_with_the_policy_and_mode) {
  auto r = request();
  BOOST_TEST(*runner::explain_hint(r, true, 1) ==
             "zpolicy: the command exited with status 1 under the built-in default policy in "
             "mode workspace-write; whether the sandbox refused it: zpolicy explain PATH");
  r.policy_path = "team policy.yaml";
  r.mode = ir::Mode::ReadOnly;
  r.workspace = "/src/proj";
  BOOST_TEST(*runner::explain_hint(r, true, 2) ==
             "zpolicy: the command exited with status 2 under team policy.yaml in mode "
             "read-only; whether the sandbox refused it: zpolicy explain --policy 'team "
             "policy.yaml' --mode read-only --workspace /src/proj PATH");
  BOOST_TEST(*runner::explain_hint(request(), true, 128 + SIGSYS) ==
             "zpolicy: the command was killed by signal 31 (SIGSYS: a system call the policy "
             "kills) under the built-in default policy in mode workspace-write; whether the "
             "sandbox refused it: zpolicy explain --syscall NAME");
}

// Red team R9-H1: after "the sandbox could not start 'cmd'; nothing ran" the line said the
// command had exited with 126.
BOOST_AUTO_TEST_CASE(a_command_that_never_started_is_not_said_to_have_exited) {
  BOOST_TEST(*runner::explain_hint(request(), true, 126, false) ==
             "zpolicy: the command did not start (status 126) under the built-in default policy "
             "in mode workspace-write; whether the sandbox hides it or its working directory: "
             "zpolicy explain PATH");
  BOOST_TEST(!runner::explain_hint(request(), true, 128 + SIGINT, false));
  BOOST_TEST(!runner::explain_hint(request(), true, 128 + SIGSYS, false));
}

BOOST_AUTO_TEST_CASE(no_hint_for_success_unconfined_runs_or_zpolicys_own_failures) {
  for (int status : {0, 4, 124, 125}) BOOST_TEST(!runner::explain_hint(request(), true, status));
  BOOST_TEST(!runner::explain_hint(request(), false, 1));
}

BOOST_AUTO_TEST_SUITE_END()
