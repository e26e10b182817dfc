#ifndef ZPOLICY_ZPOLICY_H
#define ZPOLICY_ZPOLICY_H

/* libzpolicy's C API, for embedding from C, Python (ctypes/cffi), Rust (bindgen), Go (cgo)
 * or Node without C++ ABI concerns. Opaque handles, each freed by its own function;
 * strings are UTF-8 and NUL-terminated unless a length is given; errors are diagnostics
 * in a result, never exceptions or errno. A result's strings live as long as the result. */

#include <stddef.h>

#if defined(_WIN32)
#define ZPOLICY_C_API
#else
#define ZPOLICY_C_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zpolicy_request zpolicy_request;
typedef struct zpolicy_result zpolicy_result;

enum zpolicy_target { ZPOLICY_TARGET_LINUX = 0, ZPOLICY_TARGET_MACOS = 1 };
enum zpolicy_severity { ZPOLICY_NOTE = 0, ZPOLICY_WARNING = 1, ZPOLICY_ERROR = 2 };

/* "0.1.0": the library's version, which may differ from the header's ZPOLICY_VERSION. */
ZPOLICY_C_API const char* zpolicy_version(void);

/* A request starts as "the built-in default policy, its own mode, portable output".
 * The setters return 0, or -1 on a NULL argument (the request is then unchanged). */
ZPOLICY_C_API zpolicy_request* zpolicy_request_new(void);
ZPOLICY_C_API void zpolicy_request_free(zpolicy_request* request);
ZPOLICY_C_API int zpolicy_request_set_policy_file(zpolicy_request* request, const char* path);
/* `name` is what diagnostics call the text (e.g. its file name). */
ZPOLICY_C_API int zpolicy_request_set_policy_text(zpolicy_request* request, const char* text,
                                                  size_t length, const char* name);
ZPOLICY_C_API int zpolicy_request_set_mode(zpolicy_request* request, const char* mode);
ZPOLICY_C_API int zpolicy_request_set_workspace(zpolicy_request* request, const char* directory);

/* Each returns a result (NULL only when out of memory or `request` is NULL). */
ZPOLICY_C_API zpolicy_result* zpolicy_compile(const zpolicy_request* request, int target);
ZPOLICY_C_API zpolicy_result* zpolicy_check(const zpolicy_request* request);
/* Verifies `count` artifacts (name, bytes, length) compiled elsewhere. */
ZPOLICY_C_API zpolicy_result* zpolicy_verify(const zpolicy_request* request, int target,
                                             const char* const* names,
                                             const char* const* contents,
                                             const size_t* lengths, size_t count);

/* The plan `zpolicy run` would execute for `command` (count words, command[0] found with
 * the sandbox's PATH) under the request's policy file, mode and workspace: everything an
 * embedder needs to start the sandbox itself. On success the result's one artifact is
 * "plan.json" (docs/embedding.md "The run plan"); otherwise its exit code is the one run
 * would refuse with (2, 3, 4, 126, 127) and its diagnostic the reason. A request with
 * policy text instead of a file is refused (exit 2). NULL when `command` is empty. */
ZPOLICY_C_API zpolicy_result* zpolicy_plan(const zpolicy_request* request,
                                           const char* const* command, size_t count);

/* Runs the plan of a zpolicy_plan result (exit code 0) in this process, with `zpolicy run`'s
 * supervision: the placeholders, the setup check, forwarded signals, the timeout and its
 * grace (docs/embedding.md "Running a plan in process"). No zpolicy process is started.
 * The result's exit code is run's status: the command's own, 124 timeout, 128+N killed by
 * signal N, or zpolicy's (2 not a plan, 4, 125, 126: the sandbox did not start); its one
 * diagnostic, if any, holds the messages run prints (its message is their exact text).
 * While it runs, SIGINT, SIGTERM, SIGHUP and SIGCHLD are handled by the supervisor and
 * restored after; runs in one process take turns. A caller that is not root must be dumpable
 * (one that dropped root without an exec is refused, 125; docs/embedding.md). NULL only when
 * out of memory or `plan` is NULL. */
ZPOLICY_C_API zpolicy_result* zpolicy_run(const zpolicy_result* plan);

/* `zpolicy diff`: the semantic difference of two policies (docs/review.md). The result's
 * one artifact is the table in `format` ("text", "json" or "markdown"; NULL is text):
 * "diff.txt", "diff.json" or "diff.md". Exit code 0 no difference, 1 a difference (with
 * `widen_only`, only a widening), 2 bad input with the reasons as diagnostics. */
ZPOLICY_C_API zpolicy_result* zpolicy_diff(const zpolicy_request* before,
                                           const zpolicy_request* after, const char* format,
                                           int widen_only);
/* `zpolicy check POLICY --within CEILING`: exit code 0 within, 3 an access escapes it (the
 * artifact lists each with both policies' lines), 2 bad input. */
ZPOLICY_C_API zpolicy_result* zpolicy_check_within(const zpolicy_request* policy,
                                                   const zpolicy_request* ceiling,
                                                   const char* format);

/* DESIGN.md's exit codes: 0 ok, 1 a difference (diff), 2 invalid input, 3 a dropped deny or an
 * escape, 125 internal error (zpolicy_run: run's status). */
ZPOLICY_C_API int zpolicy_result_exit_code(const zpolicy_result* result);
ZPOLICY_C_API size_t zpolicy_result_diagnostic_count(const zpolicy_result* result);
/* The i-th diagnostic; NULL / -1 for an index out of range. */
ZPOLICY_C_API const char* zpolicy_result_diagnostic_text(const zpolicy_result* result, size_t i);
ZPOLICY_C_API const char* zpolicy_result_diagnostic_code(const zpolicy_result* result, size_t i);
ZPOLICY_C_API const char* zpolicy_result_diagnostic_message(const zpolicy_result* result, size_t i);
ZPOLICY_C_API const char* zpolicy_result_diagnostic_file(const zpolicy_result* result, size_t i);
ZPOLICY_C_API int zpolicy_result_diagnostic_line(const zpolicy_result* result, size_t i);
ZPOLICY_C_API int zpolicy_result_diagnostic_column(const zpolicy_result* result, size_t i);
ZPOLICY_C_API int zpolicy_result_diagnostic_severity(const zpolicy_result* result, size_t i);
ZPOLICY_C_API size_t zpolicy_result_artifact_count(const zpolicy_result* result);
ZPOLICY_C_API const char* zpolicy_result_artifact_name(const zpolicy_result* result, size_t i);
/* The artifact's bytes (seccomp.bpf is binary: use `length`). */
ZPOLICY_C_API const char* zpolicy_result_artifact_data(const zpolicy_result* result, size_t i,
                                                       size_t* length);
ZPOLICY_C_API void zpolicy_result_free(zpolicy_result* result);

#ifdef __cplusplus
}
#endif

#endif /* ZPOLICY_ZPOLICY_H */
