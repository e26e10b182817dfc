#!/usr/bin/env python3
"""Embeds libzpolicy from Python through ctypes and runs a command through the plan:
asks the C API's zpolicy_plan for everything `zpolicy run` would do with `true` in
WORKSPACE under POLICY, shows that a bad request is refused with its reason, runs `true`
and `false` through zpolicy_run in this process (run's supervision, run's exit codes),
then starts the sandbox for `true` with run_plan.py (the independent executor beside this
file) instead of zpolicy. docs/embedding.md "The run plan" and "Running a plan in
process" describe both.

usage: plan_with_ctypes.py LIBZPOLICY_SO POLICY WORKSPACE
exits with the command's status (0), or run's refusal code when no plan is made"""
import ctypes
import json
import os
import subprocess
import sys
import tempfile

lib = ctypes.CDLL(sys.argv[1])
policy, workspace = sys.argv[2], sys.argv[3]
P, S = ctypes.c_void_p, ctypes.c_size_t
for name, res, args in [
    ("zpolicy_request_new", P, []),
    ("zpolicy_request_free", None, [P]),
    ("zpolicy_request_set_policy_file", ctypes.c_int, [P, ctypes.c_char_p]),
    ("zpolicy_request_set_mode", ctypes.c_int, [P, ctypes.c_char_p]),
    ("zpolicy_request_set_workspace", ctypes.c_int, [P, ctypes.c_char_p]),
    ("zpolicy_plan", P, [P, ctypes.POINTER(ctypes.c_char_p), S]),
    ("zpolicy_run", P, [P]),
    ("zpolicy_result_exit_code", ctypes.c_int, [P]),
    ("zpolicy_result_diagnostic_count", S, [P]),
    ("zpolicy_result_diagnostic_text", ctypes.c_char_p, [P, S]),
    ("zpolicy_result_artifact_count", S, [P]),
    ("zpolicy_result_artifact_name", ctypes.c_char_p, [P, S]),
    ("zpolicy_result_artifact_data", P, [P, S, ctypes.POINTER(S)]),
    ("zpolicy_result_free", None, [P]),
]:
    fn = getattr(lib, name)
    fn.restype, fn.argtypes = res, args


def plan(request, command, run_in_process=False):
    """(exit code, the plan's JSON bytes or None, the diagnostics' text); with
    run_in_process, (run's status, None, run's messages) of the plan executed by
    zpolicy_run in this process instead."""
    words = (ctypes.c_char_p * len(command))(*[w.encode() for w in command])
    result = lib.zpolicy_plan(request, words, len(command))
    if not result:
        raise MemoryError("zpolicy_plan")
    if run_in_process and lib.zpolicy_result_exit_code(result) == 0:
        ran = lib.zpolicy_run(result)
        lib.zpolicy_result_free(result)
        if not ran:
            raise MemoryError("zpolicy_run")
        result = ran
    code = lib.zpolicy_result_exit_code(result)
    text = "".join(lib.zpolicy_result_diagnostic_text(result, i).decode()
                   for i in range(lib.zpolicy_result_diagnostic_count(result)))
    document = None
    for i in range(lib.zpolicy_result_artifact_count(result)):
        if lib.zpolicy_result_artifact_name(result, i) == b"plan.json":
            length = S()
            data = lib.zpolicy_result_artifact_data(result, i, ctypes.byref(length))
            document = ctypes.string_at(data, length.value)
    lib.zpolicy_result_free(result)
    return code, document, text


request = lib.zpolicy_request_new()
lib.zpolicy_request_set_policy_file(request, policy.encode())
lib.zpolicy_request_set_workspace(request, workspace.encode())

# A refusal is an exit code and the reason, as `zpolicy plan` would print it.
lib.zpolicy_request_set_mode(request, b"sideways")
code, document, reason = plan(request, ["true"])
assert code == 2 and document is None and "invalid --mode 'sideways'" in reason, (code, reason)
lib.zpolicy_request_set_mode(request, b"workspace-write")

# The same plans run inside this process, with run's supervision: run's exit codes.
for command, expected in ((["true"], 0), (["false"], 1)):
    code, _, messages = plan(request, command, run_in_process=True)
    assert code == expected, (command, code, messages)
    print(f"{command[0]} ran in process through zpolicy_run: exit {code}")

code, document, reason = plan(request, ["true"])
lib.zpolicy_request_free(request)
if code != 0:
    sys.stderr.write(reason)
    sys.exit(code)
parsed = json.loads(document.decode("utf-8"))
assert parsed["zpolicy_plan"] == 7
print(f"plan: backend {parsed['backend']}, {len(parsed['argv'])} argv words, "
      f"{len(parsed['env'])} environment variables, {len(parsed['placeholders'])} placeholders")

with tempfile.NamedTemporaryFile(suffix=".json") as f:
    f.write(document)
    f.flush()
    executor = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_plan.py")
    status = subprocess.run([sys.executable, executor, f.name], cwd=workspace).returncode
print(f"true ran through the plan: exit {status}")
sys.exit(status)
