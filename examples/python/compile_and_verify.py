#!/usr/bin/env python3
"""Embeds libzpolicy from Python through ctypes: compiles a policy for Linux, verifies the
artifacts it got back, then verifies a widened copy (which must fail with exit code 3).

usage: compile_and_verify.py LIBZPOLICY_SO [POLICY]"""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
P, S = ctypes.c_void_p, ctypes.c_size_t
for name, res, args in [
    ("zpolicy_version", ctypes.c_char_p, []),
    ("zpolicy_request_new", P, []),
    ("zpolicy_request_free", None, [P]),
    ("zpolicy_request_set_policy_file", ctypes.c_int, [P, ctypes.c_char_p]),
    ("zpolicy_compile", P, [P, ctypes.c_int]),
    ("zpolicy_verify", P, [P, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                           ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(S), S]),
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

LINUX = 0
request = lib.zpolicy_request_new()
if len(sys.argv) > 2:
    lib.zpolicy_request_set_policy_file(request, sys.argv[2].encode())


def diagnostics(result):
    return [lib.zpolicy_result_diagnostic_text(result, i).decode()
            for i in range(lib.zpolicy_result_diagnostic_count(result))]


def verify(artifacts):
    n = len(artifacts)
    names = (ctypes.c_char_p * n)(*[k.encode() for k in artifacts])
    datas = (ctypes.c_char_p * n)(*artifacts.values())
    lengths = (S * n)(*[len(v) for v in artifacts.values()])
    result = lib.zpolicy_verify(request, LINUX, names, datas, lengths, n)
    code = lib.zpolicy_result_exit_code(result)
    lib.zpolicy_result_free(result)
    return code


compiled = lib.zpolicy_compile(request, LINUX)
if lib.zpolicy_result_exit_code(compiled) != 0:
    sys.exit("".join(diagnostics(compiled)))
artifacts = {}
for i in range(lib.zpolicy_result_artifact_count(compiled)):
    length = S()
    data = lib.zpolicy_result_artifact_data(compiled, i, ctypes.byref(length))
    artifacts[lib.zpolicy_result_artifact_name(compiled, i).decode()] = ctypes.string_at(data, length.value)
lib.zpolicy_result_free(compiled)

assert verify(artifacts) == 0, "the compiled artifacts do not verify"
widened = dict(artifacts, **{"bwrap.args": artifacts["bwrap.args"] + b"--bind\n/\n/\n"})
assert verify(widened) == 3, "a writable / was not caught"
lib.zpolicy_request_free(request)
print("libzpolicy", lib.zpolicy_version().decode(), "compiled", sorted(artifacts),
      "and caught a widened bwrap.args")
