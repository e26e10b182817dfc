/* Runs a command in a sandbox from inside this process, as `zpolicy run` would, through
 * libzpolicy's C API: zpolicy_plan decides everything run decides (the policy compiled
 * for this host and verified, the workspace: the current directory), then zpolicy_run
 * executes that verified plan with run's supervision (placeholders, the setup check,
 * signals, the timeout, exit codes). No zpolicy process is started.
 *
 * usage: run_command [--policy POLICY] -- CMD [ARG...]
 * Prints what run would print on stderr and exits with run's status. */
#include <stdio.h>
#include <string.h>
#include <zpolicy/zpolicy.h>

/* Each diagnostic's message, as `zpolicy run` prints it; then frees the result. */
static int finish(zpolicy_result* result) {
  if (!result) return 125;
  for (size_t i = 0; i < zpolicy_result_diagnostic_count(result); ++i)
    fputs(zpolicy_result_diagnostic_message(result, i), stderr);
  int code = zpolicy_result_exit_code(result);
  zpolicy_result_free(result);
  return code;
}

int main(int argc, char** argv) {
  const char* policy = NULL;
  int i = 1;
  if (i + 1 < argc && strcmp(argv[i], "--policy") == 0) {
    policy = argv[i + 1];
    i += 2;
  }
  if (i >= argc || strcmp(argv[i], "--") != 0 || i + 1 >= argc) {
    fputs("usage: run_command [--policy POLICY] -- CMD [ARG...]\n", stderr);
    return 2;
  }
  ++i;
  zpolicy_request* request = zpolicy_request_new();
  if (!request || (policy && zpolicy_request_set_policy_file(request, policy) != 0)) return 125;
  zpolicy_result* plan = zpolicy_plan(request, (const char* const*)(argv + i), (size_t)(argc - i));
  zpolicy_request_free(request);
  if (!plan) return 125;
  if (zpolicy_result_exit_code(plan) != 0) return finish(plan);
  /* A plan's notes (an accepted lint, an unconfined run) come first, as run prints them. */
  for (size_t d = 0; d < zpolicy_result_diagnostic_count(plan); ++d)
    fputs(zpolicy_result_diagnostic_message(plan, d), stderr);
  zpolicy_result* ran = zpolicy_run(plan);
  zpolicy_result_free(plan);
  return finish(ran);
}
