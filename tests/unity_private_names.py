#!/usr/bin/env python3
"""Fails when two source files of one library layer (or the CLI, or the kernel tests) define
the same private name where unqualified lookup could meet both.

A unity build (CMakeLists.txt, ZPOLICY_UNITY_BUILD) compiles a layer's files in batches,
one translation unit a batch, where their anonymous namespaces and file-static names
meet. The same name with the same signature fails to compile; with another signature it
becomes an overload, and a call may bind to the other file's function without a word.
scripts/unity_check.sh proves the bindings on a build; this test keeps the precondition
cheaply: every private name (in an anonymous namespace, or static at namespace scope) is
its file's alone within its layer, unless the two sit in sibling named namespaces (two
Boost.Test suites, whose macros open a namespace each), where each file's own name hides
the other's.

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


def suites_as_namespaces(code):
    """Boost.Test's suite macros as the namespaces they open: BOOST_AUTO_TEST_SUITE(name, ...)
    and BOOST_FIXTURE_TEST_SUITE(name, ...) open `namespace name {`, BOOST_AUTO_TEST_SUITE_END()
    closes it."""
    code = re.sub(r"\bBOOST_AUTO_TEST_SUITE_END\s*\(\s*\)", "}", code)
    out, pos = [], 0
    for m in re.finditer(r"\bBOOST_(?:AUTO|FIXTURE)_TEST_SUITE\s*\(\s*(\w+)", code):
        depth, end = 1, m.end()
        while depth and end < len(code):
            depth += {"(": 1, ")": -1}.get(code[end], 0)
            end += 1
        out += [code[pos:m.start()], f"namespace {m.group(1)} {{"]
        pos = end
    return "".join(out) + code[pos:]


def private_names(path):
    """(name, named namespaces around it) for each private name of the file."""
    code = suites_as_namespaces(code_only(open(path, encoding="utf-8").read()))
    names, scopes, start = set(), [], 0
    for m in re.finditer(r"[{};]", code):
        statement = code[start:m.start()]
        start = m.end()
        at_namespace_scope = all(kind != "other" for kind, _ in scopes)
        private = any(kind == "anonymous" for kind, _ in scopes) or re.match(
            r"\s*(template\s*<.*?>\s*)?((inline|constexpr)\s+)*static\b", statement, re.S)
        if m.group() == "}":
            if scopes:
                scopes.pop()
            continue
        kind, opened = "other", ()
        if m.group() == "{":
            if re.search(r"\bnamespace\s*$", statement):
                kind = "anonymous"
            elif (n := re.search(r"\bnamespace\s+([\w:]+)\s*$", statement)):
                kind, opened = "named", tuple(n.group(1).split("::"))
            elif re.search(r"extern\s*\"\"\s*$", statement):
                kind = "named"
        if at_namespace_scope and kind == "other" and private:
            name = declared_name(statement)
            if name:
                names.add((name, sum((o for _, o in scopes), ())))
        if m.group() == "{":
            scopes.append((kind, opened))
    return names


def main(argv):
    layers, clashes = [], 0
    for arg in argv:
        if arg == "--layer":
            layers.append([])
        else:
            layers[-1].append(arg)
    for files in layers:
        owners = {}
        for path in files:
            for name, where in sorted(private_names(path)):
                # Unqualified lookup meets two private declarations of a name only when one
                # sits in a namespace enclosing (or equal to) the other's: in sibling
                # namespaces (two test suites) each file's own hides the other's.
                for other, other_where in owners.get(name, []):
                    shorter = min(len(where), len(other_where))
                    if other != path and where[:shorter] == other_where[:shorter]:
                        print(f"{path}: {name} is private to {other} too")
                        clashes += 1
                        break
                owners.setdefault(name, []).append((path, where))
    if clashes:
        print(f"{clashes} private name(s) shared within a layer: rename one of each "
              "(or compile the file alone: SKIP_UNITY_BUILD_INCLUSION in CMakeLists.txt)")
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
