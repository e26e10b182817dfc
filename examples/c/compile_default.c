/* Compiles the built-in default policy for Linux through libzpolicy's C API, found with
 * pkg-config, and prints the artifacts' names and sizes. Exits with zpolicy's code. */
#include <stdio.h>
#include <zpolicy/zpolicy.h>

int main(void) {
  zpolicy_request* request = zpolicy_request_new();
  if (!request) return 125;
  zpolicy_result* result = zpolicy_compile(request, ZPOLICY_TARGET_LINUX);
  zpolicy_request_free(request);
  if (!result) return 125;
  for (size_t i = 0; i < zpolicy_result_diagnostic_count(result); ++i)
    fputs(zpolicy_result_diagnostic_text(result, i), stderr);
  for (size_t i = 0; i < zpolicy_result_artifact_count(result); ++i) {
    size_t length = 0;
    zpolicy_result_artifact_data(result, i, &length);
    printf("%s %zu\n", zpolicy_result_artifact_name(result, i), length);
  }
  int code = zpolicy_result_exit_code(result);
  zpolicy_result_free(result);
  return code;
}
