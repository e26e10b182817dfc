#!/usr/bin/env python3
"""Fails when two source files of one library layer define the same private name.

A unity build (CMakeLists.txt, ZPOLICY_UNITY_BUILD) compiles a layer's files in batches,
one translation unit a batch, where their anonymous namespaces and file-static names
meet. The same name with the same signature fails to compile; with another signature it
becomes an overload, and a call may bind to the other file's function without a word.
scripts/unity_check.sh proves the bindings on a build; this test keeps the precondition
cheaply: every private name (in an anonymous namespace, or static at namespace scope) is
its file's alone within its layer.

Usage: unity_private_names.py --layer FILE... [--layer FILE...]
The reading is textual (comments, literals and preprocessor lines dropped, braces
counted), which suffices for clang-formatted code.
"""
import re
import sys

KEYWORDS = set("if for while switch return sizeof alignof decltype static_assert operator "
               "catch new delete throw case default using typedef template requires "
               "noexcept".split())


LEXEMES = re.compile(r"""//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(?:\\.|[^"\\])*"|(?<!\w)'(?:\\.|[^'\\])*'""",
                     re.S)


def code_only(src):
    """The source without comments, literals' contents and preprocessor lines."""
    def blank(m):
        text = m.group()
        return "\n" * text.count("\n") if text.startswith("/") else '""'

    return re.sub(r"^[ \t]*#.*$", "", LEXEMES.sub(blank, src), flags=re.M)


def declared_name(statement):
    """The name a namespace-scope declaration introduces, if it is one we can read."""
    st = " ".join(statement.split())
    st = re.sub(r"^template\s*<.*?>\s*", "", st)
    if (m := re.match(r"using\s+(\w+)\s*=", st)):
        return m.group(1)
    if not st or st.startswith(("using ", "namespace", "extern ")):
        return None
    if (m := re.match(r"(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)", st)):
        return m.group(1)
    if (m := re.match(r"([^(=]*?)\b(\w+)\s*\(", st)) and m.group(2) not in KEYWORDS:
        return m.group(2) + "()"
    if (m := re.match(r"([^=({\[]*?)\b(\w+)\s*(=|\[|\{|$)", st)) and m.group(2) not in KEYWORDS:
        return m.group(2)
    return None


def private_names(path):
    code = code_only(open(path, encoding="utf-8").read())
    names, scopes, start = set(), [], 0
    for m in re.finditer(r"[{};]", code):
        statement = code[start:m.start()]
        start = m.end()
        at_namespace_scope = all(kind != "other" for kind in scopes)
        private = "anonymous" in scopes or re.match(
            r"\s*(template\s*<.*?>\s*)?((inline|constexpr)\s+)*static\b", statement, re.S)
        if m.group() == "}":
            if scopes:
                scopes.pop()
            continue
        kind = "other"
        if m.group() == "{":
            if re.search(r"\bnamespace\s*$", statement):
                kind = "anonymous"
            elif re.search(r"\bnamespace\s+[\w:]+\s*$|extern\s*\"\"\s*$", statement):
                kind = "named"
        if at_namespace_scope and kind == "other" and private:
            name = declared_name(statement)
            if name:
                names.add(name)
        if m.group() == "{":
            scopes.append(kind)
    return names


def main(argv):
    layers, clashes = [], 0
    for arg in argv:
        if arg == "--layer":
            layers.append([])
        else:
            layers[-1].append(arg)
    for files in layers:
        owner = {}
        for path in files:
            for name in private_names(path):
                if name in owner:
                    print(f"{path}: {name} is private to {owner[name]} too")
                    clashes += 1
                else:
                    owner[name] = path
    if clashes:
        print(f"{clashes} private name(s) shared within a layer: rename one of each "
              "(or compile the file alone: SKIP_UNITY_BUILD_INCLUSION in CMakeLists.txt)")
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
