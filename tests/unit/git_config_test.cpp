// The git config reader (compiler/resolve/git_config.hpp) against git's own syntax rules,
// each case checked by hand against `git config -f FILE -l` (git 2.39), and what
// resolution takes a key to name (git_config_keys.hpp).
#include "compiler/resolve/git_config.hpp"

#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "compiler/resolve/git_command_words.hpp"
#include "compiler/resolve/git_config_keys.hpp"
#include "compiler/resolve/git_config_targets.hpp"
#include "compiler/resolve/git_index.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy::compiler;

namespace {

struct Walked {
  std::vector<std::string> targets;  // sorted, deduplicated
  std::vector<std::string> refusals;
  std::vector<std::string> scripts;  // targets an interpreter runs, in the order found
};

// git_config_targets over `top`/.git, canonicalizing with the filesystem's rules.
Walked walk(const zpolicy::test::TempDir& top) {
  Walked out;
  const GitConfigSources src{top / ".git", {top / ".git/config"}, {top.str()}};
  const GitCanonical canonical = [](const std::string& p, const zpolicy::ir::SourceLoc&,
                                    const std::string&) {
    return std::optional<std::string>(std::filesystem::weakly_canonical(p).string());
  };
  const GitRefusal refuse = [&](const zpolicy::ir::SourceLoc& loc, const std::string& why) {
    out.refusals.push_back(loc.str() + " " + why);
  };
  GitConfigReads reads;
  for (const auto& t : git_config_targets(src, "/home/u", canonical, refuse, reads)) {
    out.targets.push_back(t.path);
    if (t.script) out.scripts.push_back(t.path);
  }
  std::sort(out.targets.begin(), out.targets.end());
  out.targets.erase(std::unique(out.targets.begin(), out.targets.end()), out.targets.end());
  return out;
}

// "var=value" (or "var" for a key without '=') per entry, as `git config -l` prints them.
std::vector<std::string> listed(const std::string& text) {
  const GitConfig cfg = parse_git_config(text);
  BOOST_TEST_REQUIRE(!cfg.error, "line " << cfg.error->line << ": " << cfg.error->what);
  std::vector<std::string> out;
  for (const auto& e : cfg.entries) out.push_back(e.var + (e.value ? "=" + *e.value : ""));
  return out;
}

int error_line(const std::string& text) {
  const GitConfig cfg = parse_git_config(text);
  return cfg.error ? cfg.error->line : 0;
}

using Lines = std::vector<std::string>;

GitConfigRole role(const std::string& text) {
  const GitConfig cfg = parse_git_config(text);
  BOOST_TEST_REQUIRE(cfg.entries.size() == 1u);
  return git_config_role(cfg.entries.front());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(git_config)

BOOST_AUTO_TEST_CASE(sections_and_subsections) {
  BOOST_TEST(listed("[core]\nhooksPath = x\n") == (Lines{"core.hookspath=x"}));
  BOOST_TEST(listed("[CoRe]\n\tHOOKSPATH=x\n") == (Lines{"core.hookspath=x"}));
  BOOST_TEST(listed("[Diff \"My.Drv\"]\n\tcommand = x\n") == (Lines{"diff.My.Drv.command=x"}));
  BOOST_TEST(listed("[Diff.My]\n\tcommand = x\n") == (Lines{"diff.my.command=x"}));
  BOOST_TEST(listed("[a \"q\\\"b\\\\c\\d\"]\nk=1\n") == (Lines{"a.q\"b\\cd.k=1"}));
  BOOST_TEST(listed("[core] hooksPath = x\n") == (Lines{"core.hookspath=x"}));
  BOOST_TEST(listed("key = 1\n[s]\n") == (Lines{"key=1"}));
  BOOST_TEST(listed("[a]\nk=1\n[b]\nk=2\n") == (Lines{"a.k=1", "b.k=2"}));
  const GitConfig cfg = parse_git_config("[includeIf \"gitdir:/x/y.z/\"]\npath = p\n");
  BOOST_TEST_REQUIRE(cfg.entries.size() == 1u);
  BOOST_TEST(cfg.entries[0].section() == "includeif");
  BOOST_TEST(cfg.entries[0].subsection().value_or("") == "gitdir:/x/y.z/");
  BOOST_TEST(cfg.entries[0].name() == "path");
}

BOOST_AUTO_TEST_CASE(a_key_without_a_value_is_true) {
  const GitConfig cfg = parse_git_config("[pager]\n\tlog\n\tdiff   \n[x]\nk");
  BOOST_TEST_REQUIRE(!cfg.error);
  BOOST_TEST_REQUIRE(cfg.entries.size() == 3u);
  for (const auto& e : cfg.entries) BOOST_TEST(!e.value.has_value());
  BOOST_TEST(listed("[a]\nk =\n") == (Lines{"a.k="}));
}

BOOST_AUTO_TEST_CASE(values_are_trimmed_quoted_and_escaped) {
  BOOST_TEST(listed("[a]\nk =   x  y\t \n") == (Lines{"a.k=x  y"}));
  BOOST_TEST(listed("[a]\nk = x\ty\n") == (Lines{"a.k=x y"}));
  BOOST_TEST(listed("[a]\nk = \" a  b\"\t c\n") == (Lines{"a.k= a  b  c"}));
  BOOST_TEST(listed("[a]\nk = \"x # y ; z\"\n") == (Lines{"a.k=x # y ; z"}));
  BOOST_TEST(listed("[a]\nk = a\\tb\\nc\\bd\\\\e\\\"f\n") == (Lines{"a.k=a\tb\nc\bd\\e\"f"}));
  BOOST_TEST(listed("[a]\nk = a\\\n  b\nj = 2\n") == (Lines{"a.k=a  b", "a.j=2"}));
  BOOST_TEST(listed("[a]\nk = a\"b\"c\n") == (Lines{"a.k=abc"}));
}

BOOST_AUTO_TEST_CASE(comments) {
  BOOST_TEST(listed("# c\n; c\n[a] # c\nk = x # c\nj = y;c\n  # [b]\n") ==
             (Lines{"a.k=x", "a.j=y"}));
}

BOOST_AUTO_TEST_CASE(line_ends_and_byte_order_mark) {
  BOOST_TEST(listed("\xEF\xBB\xBF[a]\r\nk = x\r\nj = y") == (Lines{"a.k=x", "a.j=y"}));
  BOOST_TEST(parse_git_config("[a]\n\nk = x\n").entries.at(0).line == 3);
  BOOST_TEST(parse_git_config("[a]\nk = x\\\ny\nj = 1\n").entries.at(1).line == 4);
}

// trace.c and trace2/tr2_dst.c: only an absolute path or a socket's names a file.
BOOST_AUTO_TEST_CASE(trace_targets_name_a_file_only_by_an_absolute_path) {
  BOOST_TEST(git_trace_path("/w/t.log").value_or("") == "/w/t.log");
  BOOST_TEST(git_trace_path("af_unix:/w/s").value_or("") == "/w/s");
  BOOST_TEST(git_trace_path("af_unix:stream:/w/s").value_or("") == "/w/s");
  BOOST_TEST(git_trace_path("af_unix:dgram:/w/s").value_or("") == "/w/s");
  for (const char* none : {"1", "true", "0", "9", "t.log", "af_unix:s", "", "~/t.log"})
    BOOST_TEST(!git_trace_path(none), none);
}

BOOST_AUTO_TEST_CASE(what_git_refuses_is_an_error_at_its_line) {
  BOOST_TEST(error_line("[a]\nk = \\q\n") == 2);       // an unknown escape
  BOOST_TEST(error_line("[a]\n  k = \"x") == 2);       // an open quote at the end
  BOOST_TEST(error_line("[a]\nk = \"x\ny\"\n") == 2);  // a quote across lines
  BOOST_TEST(error_line("[a\nk=1\n") == 1);            // an open section
  BOOST_TEST(error_line("[a b]\n") == 1);              // a subsection not quoted
  BOOST_TEST(error_line("[]\n") == 1);
  BOOST_TEST(error_line("[a \"b\"x]\n") == 1);
  BOOST_TEST(error_line("[a]\nk # c\n") == 2);         // no '=' before a comment
  BOOST_TEST(error_line("[a]\n1k = x\n") == 2);        // a key starts with a letter
  BOOST_TEST(error_line("[a]\nk_x = 1\n") == 2);
  BOOST_TEST(error_line(std::string("[a]\nk = x\0y\n", 12)) == 2);
  const GitConfig cfg = parse_git_config("[a]\nk = 1\nj = \\q\n");
  BOOST_TEST(cfg.entries.size() == 1u);
}

BOOST_AUTO_TEST_CASE(roles_of_keys) {
  BOOST_TEST((role("[core]\nHooksPath = x\n") == GitConfigRole::HooksDir));
  BOOST_TEST((role("[core]\nworktree = x\n") == GitConfigRole::WorkTree));
  BOOST_TEST((role("[trace2]\neventTarget = /x\n") == GitConfigRole::TraceTarget));
  BOOST_TEST((role("[trace2]\nNormalTarget = 1\n") == GitConfigRole::TraceTarget));
  BOOST_TEST((role("[trace2]\nenvVars = HOME\n") == GitConfigRole::None));
  BOOST_TEST((role("[include]\npath = x\n") == GitConfigRole::Include));
  BOOST_TEST((role("[includeIf \"onbranch:main\"]\npath = x\n") == GitConfigRole::Include));
  BOOST_TEST((role("[include \"x\"]\npath = x\n") == GitConfigRole::None));
  for (const char* text :
       {"[core]\nfsmonitor = x\n", "[core]\neditor = x\n", "[core]\npager = x\n",
        "[core]\nsshCommand = x\n", "[core]\naskPass = x\n", "[core]\ngitProxy = x\n",
        "[core]\nalternateRefsCommand = x\n", "[sequence]\neditor = x\n",
        "[diff]\nexternal = x\n", "[diff \"d\"]\ncommand = x\n", "[diff \"d\"]\ntextconv = x\n",
        "[merge \"d\"]\ndriver = x\n", "[filter \"d\"]\nclean = x\n",
        "[filter \"d\"]\nsmudge = x\n", "[filter \"d\"]\nprocess = x\n",
        "[credential]\nhelper = x\n", "[credential \"https://h/p\"]\nhelper = x\n",
        "[gpg]\nprogram = x\n", "[gpg \"ssh\"]\nprogram = x\n",
        "[gpg \"ssh\"]\ndefaultKeyCommand = x\n", "[hook \"h\"]\ncommand = x\n",
        "[alias]\nx = !sh y\n", "[submodule \"s\"]\nupdate = !x\n", "[pager]\nlog = x\n",
        "[difftool \"t\"]\ncmd = x\n", "[mergetool \"t\"]\npath = x\n",
        "[remote \"o\"]\nuploadpack = x\n", "[uploadpack]\npackObjectsHook = x\n",
        "[sendemail]\nsmtpServer = x\n", "[sendemail]\nsendmailCmd = x\n",
        "[trailer \"t\"]\ncmd = x\n", "[imap]\ntunnel = x\n", "[web]\nbrowser = x\n",
        "[interactive]\ndiffFilter = x\n"})
    BOOST_TEST((role(text) == GitConfigRole::Command), text);
  // Red team A14B-4: what git runs or connects to that is not a shell command.
  BOOST_TEST((role("[alias]\nx = log -- a/b\n") == GitConfigRole::GitCommand));
  // git reads it from the global and system config only, which resolution reads too
  // (red team R18-6): the hooks it holds are copied into each new repository.
  BOOST_TEST((role("[init]\ntemplateDir = t\n") == GitConfigRole::HooksDir));
  for (const char* text : {"[remote \"o\"]\nurl = https://h/r\n", "[remote \"o\"]\npushUrl = ../r\n",
                           "[submodule \"s\"]\nurl = ../s\n"})
    BOOST_TEST((role(text) == GitConfigRole::Url), text);
  for (const char* text : {"[url \"ext::x\"]\ninsteadOf = https://\n",
                           "[url \"/srv/\"]\npushInsteadOf = h:\n"})
    BOOST_TEST((role(text) == GitConfigRole::UrlRewrite), text);
  for (const char* text : {"[submodule \"s\"]\nupdate = rebase\n", "[submodule \"s\"]\npath = a/b\n",
                           "[core]\nexcludesFile = a/b\n", "[completion]\ncommands = a/b\n"})
    BOOST_TEST((role(text) == GitConfigRole::None), text);
}

// Red team R25-6: the programs tools that git runs take from git's config, each group
// classed as a command (its words then name files to protect), beside keys of the same
// names that stay data.
BOOST_AUTO_TEST_CASE(programs_other_tools_run_from_gits_config_are_commands) {
  for (const char* text :
       {// git-lfs: a custom transfer agent (new), its extensions (by name already).
        "[lfs \"customtransfer.agent\"]\npath = tools/agent\n",
        "[lfs \"extension.x\"]\nclean = tools/x %f\n", "[lfs \"extension.x\"]\nsmudge = x %f\n",
        // git-secrets' providers.
        "[secrets]\nproviders = tools/list-secrets\n",
        // git-svn's authors program, in `svn` and in a `svn-remote`.
        "[svn]\nauthorsProg = tools/authors\n", "[svn-remote \"svn\"]\nauthorsProg = a\n"})
    BOOST_TEST((role(text) == GitConfigRole::Command), text);
  for (const char* text : {"[lfs]\nstandalonetransferagent = agent\n",
                           "[lfs \"customtransfer.agent\"]\nargs = tools/x\n",
                           "[secrets]\npatterns = tools/x\n", "[svn]\nauthorsFile = a\n"})
    BOOST_TEST((role(text) == GitConfigRole::None), text);
}

BOOST_AUTO_TEST_CASE(words_of_a_command_that_name_files) {
  using W = std::vector<std::string>;
  BOOST_TEST(paths_in_command("vim").words.empty());
  BOOST_TEST(paths_in_command("./tools/ed --wait").words == (W{"./tools/ed"}));
  BOOST_TEST(paths_in_command("FOO=bin/x cmd --opt=/abs/y").words == (W{"bin/x", "/abs/y"}));
  BOOST_TEST(paths_in_command("X=./bin:/usr/bin x").words == (W{"./bin", "/usr/bin"}));
  BOOST_TEST(paths_in_command("~/bin/x").words == (W{"~/bin/x"}));
  // As `sh` removes quotes (red team A14B-3): adjacent pieces make one word.
  BOOST_TEST(paths_in_command("\"tools\"/fsm").words == (W{"tools/fsm"}));
  BOOST_TEST(paths_in_command("to\"ol\"s/fsm --x").words == (W{"tools/fsm"}));
  // A word with a blank is also split there (red team A15-G1): a program may hand it to sh.
  BOOST_TEST(paths_in_command("'my tools'/x a\\ b/c").words ==
             (W{"my tools/x", "tools/x", "a b/c", "b/c"}));
  // `sh -c STRING` is read as a command; an option word names no placeholder (A14B-7).
  BOOST_TEST(paths_in_command("!sh -c 'x/run \"a/b\"'").words == (W{"x/run", "a/b"}));
  BOOST_TEST(paths_in_command("cc -Itools/inc -o -x").words.empty());
  // A revision, refspec, URL or host before a ':' names no file (A14B-7).
  BOOST_TEST(paths_in_command("git push origin HEAD:refs/heads/x").words.empty());
  BOOST_TEST(paths_in_command("x --ref=main:a/b https://h/p host:dir/f").words.empty());
  BOOST_TEST(paths_in_command("x --path=./a:/b").words == (W{"./a", "/b"}));
  // Everyday aliases with functions and operators, as long as they name no path.
  const auto alias = paths_in_command("!f() { git log --oneline \"$@\" | head -n 5; }; f");
  BOOST_TEST(!alias.unreadable);
  BOOST_TEST(alias.words.empty());
}

// What a shell would do with a command that zpolicy cannot follow refuses (red team
// A14B-3), as does an interpreter that loads code by a name relative to where git runs it
// (A14B-2: `python3 -m nbstripout` imported a planted nbstripout.py).
BOOST_AUTO_TEST_CASE(commands_zpolicy_cannot_follow_are_unreadable) {
  for (const char* value :
       {"$HOME/bin/x", "${GIT_DIR}/x", "scripts/*.sh", "~root/x", "`tools/x`", "$(tools/x)",
        "\"$(printf tools)\"", "cd tools && ./x", "pushd tools; x", "eval x", ". ./lib.sh",
        "cmd < x", "!f() { sh ./tools/alias.sh \"$1\"; }; f", "!sh -c 'x/run'; y/z",
        "a | tools/b", "(tools/x)", "'unterminated", "sh tools/conv.sh", "sh conv.sh",
        "bash", "sh -s", "python3 -m nbstripout", "python3 -mnbstripout",
        "env python3 -m nbstripout", "env -i python3 x.py", "/usr/bin/python3.11 x.py",
        "PYTHONPATH=tools python3 /opt/x", "LD_PRELOAD=x.so git", "PATH=bin x",
        "perl -Ilib /opt/x", "perl -MFoo -e 1", "ruby -rfoo /opt/x", "node --require x /opt/y",
        "node -e \"require('x')\"", "python3 -c 'import nbstripout'", "bash --rcfile x",
        "sh -c 'sh -c \"sh -c \\\"sh -c x\\\"\"'"})
    BOOST_TEST(paths_in_command(value).unreadable.has_value(), value);
  BOOST_TEST(paths_in_command("python3 -m nbstripout").unreadable.value_or("").find(
                 "absolute path") != std::string::npos);
  using W = std::vector<std::string>;
  const auto abs = paths_in_command("env python3 /opt/nb/nbstripout --textconv");
  BOOST_TEST(!abs.unreadable);
  BOOST_TEST(abs.scripts == (W{"/opt/nb/nbstripout"}));
  BOOST_TEST(!paths_in_command("sh -c 'exit 0'").unreadable);
  BOOST_TEST(!paths_in_command("perl -e 'print 1' --").unreadable);
  BOOST_TEST(paths_in_command("bash -ec 'tools/x --y'").words == (W{"tools/x"}));
}

// Red team A15-G1: a program zpolicy does not know may be a wrapper (`timeout 10 python3
// -m x` imported a planted x.py): its later words are read from the first that names an
// interpreter, a script-option program or env, as `sh` would hand them to it; a word with
// a blank that names one is read as a command (what `su -c`, `watch` or `PAGER=` run).
BOOST_AUTO_TEST_CASE(a_wrapped_interpreter_is_read_as_the_program) {
  for (const char* value :
       {"timeout 10 python3 -m nbfilter", "timeout -s KILL 10 python3 -mx", "nice -n 5 python3 -m x",
        "ionice -c3 python3 -m x", "stdbuf -o0 python3 -m x", "setsid python3 -m x",
        "flock /tmp/l python3 -m x", "xargs python3 -m x", "chrt -f 50 perl -Ilib /opt/x",
        "taskset 1 node --require x /opt/y", "sudo -u u python3 -m x", "unshare -r bash tools/x.sh",
        "firejail --quiet python3 x.py", "timeout 10 sh -c 'python3 -m x'",
        "nice env PYTHONPATH=. python3 /opt/x", "sudo PYTHONPATH=. /opt/x",
        "timeout 10 /usr/bin/python3.11 -m x", "watch 'python3 -m x'", "su -c 'python3 -m x' u",
        "PAGER='python3 -m pg' git log", "!git -c core.pager='python3 -m pg' log",
        "nice timeout 5 make", "timeout 5 npx prettier"})
    BOOST_TEST(paths_in_command(value).unreadable.has_value(), value);
  using W = std::vector<std::string>;
  const auto wrapped = paths_in_command("timeout 10 python3 /opt/nb/nbstripout");
  BOOST_TEST(!wrapped.unreadable);
  BOOST_TEST(wrapped.scripts == (W{"/opt/nb/nbstripout"}));
  BOOST_TEST(paths_in_command("nice -n 5 ./tools/fmt").words == (W{"./tools/fmt"}));
  // Blank words that name no such program are split, not refused: git's formats.
  const auto format =
      paths_in_command("!git log --pretty=format:'%C(auto)%h %s <%an>' -- src/");
  BOOST_TEST(!format.unreadable, format.unreadable.value_or(""));
  BOOST_TEST(format.words == (W{"src/"}));
  BOOST_TEST(!paths_in_command("delta --features 'side-by-side line-numbers'").unreadable);
  BOOST_TEST(paths_in_command("sed -e '1e ./tools/x'").words == (W{"1e ./tools/x", "./tools/x"}));
}

// Red team A15-G2: a program that runs a file named by an option, with or without a '/'
// (as `sed -f strip.sed` ran a planted `e` command; sed's and awk's are scripts, below),
// and one that runs the project where it runs (a bare `make` reads the top's Makefile and
// its includes).
BOOST_AUTO_TEST_CASE(files_named_without_a_slash) {
  using W = std::vector<std::string>;
  for (const char* value : {"jq -f q.jq", "jq -fq.jq", "jq --from-file=q.jq", "jq --from q.jq",
                            "jq -r -f q.jq", "timeout 5 jq -f q.jq"})
    BOOST_TEST(paths_in_command(value).words == (W{"q.jq"}), value);
  BOOST_TEST(paths_in_command("ssh -F ssh_config").words == (W{"ssh_config"}));
  BOOST_TEST(paths_in_command("vim -u vimrc").words == (W{"vimrc"}));
  const auto xargs = paths_in_command("xargs -a list python3 /opt/x");
  BOOST_TEST(xargs.words == (W{"list", "/opt/x"}));
  BOOST_TEST(xargs.scripts == (W{"/opt/x"}));
  BOOST_TEST(paths_in_command("jq -f $X/s.jq").unreadable.has_value());
  for (const char* value : {"make", "make -f x.mk", "gmake -C tools", "npx prettier --write",
                            "npm run fmt", "yarn fmt", "bundle exec rubocop", "poetry run fmt",
                            "cargo run -q", "!f() { make lint; }; f"})
    BOOST_TEST(paths_in_command(value).unreadable.has_value(), value);
  // Other words without a '/' name a file only if one exists at the top (bare); not the
  // program's, nor an option's without '=', nor an assignment's name.
  const auto bare = paths_in_command("prettier --config=cfg.toml -x y.txt FOO=1");
  BOOST_TEST(bare.bare == (W{"cfg.toml", "y.txt", "1"}));
  BOOST_TEST(paths_in_command("vim").bare.empty());
}

// Red team A15-G4: the `#!` line of a file a command names, as the kernel splits it.
BOOST_AUTO_TEST_CASE(what_a_shebang_runs) {
  for (const char* line :
       {"#!/usr/bin/env python3", "#!/usr/bin/python3 -u", "#! /usr/bin/node", "#!/usr/bin/env node",
        "#!/usr/bin/env -S python3 -u", "#!/usr/bin/env -i python3", "#!/usr/bin/perl -w",
        "#!/usr/bin/ruby", "#!/usr/bin/env FOO=1 sh", "#!/usr/bin/env -S uv run --script"}) {
    const auto s = shebang_of(line);
    BOOST_TEST_REQUIRE(s.has_value(), line);
    BOOST_TEST(s->loads_code_by_name, line);
  }
  for (const char* line : {"#!/bin/sh", "#!/bin/bash -e", "#!/usr/bin/env bash", "#!tools/interp"})
    BOOST_TEST(!shebang_of(line).value().loads_code_by_name, line);
  BOOST_TEST(shebang_of("#!tools/interp")->interpreter == "tools/interp");
  BOOST_TEST(!shebang_of("import json").has_value());
}

// A file a command names whose `#!` interpreter loads code next to it is a script target
// (refused in a writable root); so is one behind a `#!` interpreter in the worktree; a word
// without a '/' is a target only where a file of that name exists.
BOOST_AUTO_TEST_CASE(scripts_named_by_their_shebang_and_bare_files) {
  zpolicy::test::TempDir top;
  top.write(".git/HEAD", "ref: refs/heads/main\n");
  top.write(".git/config",
            "[filter \"j\"]\n\tclean = tools/clean.py\n\tsmudge = tools/plain.sh\n"
            "[filter \"k\"]\n\tclean = tools/via-interp\n"
            "[filter \"s\"]\n\tclean = sed -n --expression=p strip.sed gone.sed\n");
  top.write("tools/clean.py", "#!/usr/bin/env python3\nimport json\n");
  top.write("tools/plain.sh", "#!/bin/sh\ncat\n");
  top.write("tools/via-interp", "#!tools/interp\n");
  top.write("tools/interp", "#!/usr/bin/python3\n");
  top.write("strip.sed", "p\n");
  const Walked w = walk(top);
  BOOST_TEST(w.refusals.empty());
  const std::string t = top.str();
  BOOST_TEST(w.scripts == (std::vector<std::string>{t + "/tools/clean.py", t + "/tools/interp"}));
  for (const auto* named : {"/tools/plain.sh", "/tools/via-interp", "/strip.sed"})
    BOOST_TEST((std::find(w.targets.begin(), w.targets.end(), t + named) != w.targets.end()), named);
  BOOST_TEST((std::find(w.targets.begin(), w.targets.end(), t + "/gone.sed") == w.targets.end()));
}

// Red team A14B-4: an alias without '!' runs git, whose options may run a program.
BOOST_AUTO_TEST_CASE(a_git_command_alias_is_read_as_git_reads_it) {
  using Cmds = std::vector<std::string>;
  auto commands = [](const std::string& v) {
    Cmds out;
    for (const auto& c : git_arguments(v).commands)
      out.push_back(c.option + "=" + c.text + (c.in_submodules ? " (in submodules)" : ""));
    return out;
  };
  BOOST_TEST(commands("difftool --extcmd=tools/d") == (Cmds{"--extcmd=tools/d"}));
  BOOST_TEST(commands("difftool -y -x 'tools/d --a'") == (Cmds{"-x=tools/d --a"}));
  BOOST_TEST(commands("difftool --ext tools/d") == (Cmds{"--extcmd=tools/d"}));
  BOOST_TEST(commands("rebase -ix\"tools/r\" main") == (Cmds{"-x=tools/r"}));
  BOOST_TEST(commands("rebase --exec=make main") == (Cmds{"--exec=make"}));
  BOOST_TEST(commands("fetch --upload-pack=tools/up o") == (Cmds{"--upload-pack=tools/up"}));
  BOOST_TEST(commands("clone -u tools/up x") == (Cmds{"-u=tools/up"}));
  BOOST_TEST(commands("push --receive-pack tools/rp o") == (Cmds{"--receive-pack=tools/rp"}));
  BOOST_TEST(commands("grep -O x") == (Cmds{}));  // -O's value is glued or none
  BOOST_TEST(commands("bisect run tools/b 'a b'") == (Cmds{"bisect run='tools/b' 'a b'"}));
  BOOST_TEST(commands("submodule foreach --recursive 'tools/f x'") ==
             (Cmds{"submodule foreach=tools/f x (in submodules)"}));
  BOOST_TEST(commands("log --oneline -x -- a/b").empty());
  BOOST_TEST(commands("rebase -- -x").empty());
  const GitArguments c = git_arguments("-c core.HooksPath=.h2 -c Alias.My.Sub.X=y -p commit");
  BOOST_TEST_REQUIRE(c.config.size() == 2u);
  BOOST_TEST(c.config[0].first == "core.hookspath");
  BOOST_TEST(c.config[0].second.value_or("") == ".h2");
  BOOST_TEST(c.config[1].first == "alias.My.Sub.x");
  BOOST_TEST(git_arguments("--exec-path=tools/bin status").directories == (Cmds{"tools/bin"}));
  BOOST_TEST(git_arguments("init --template=tpl").templates == (Cmds{"tpl"}));
  BOOST_TEST(git_arguments("--config-env=core.editor=ED commit").unreadable.has_value());
  BOOST_TEST(!git_arguments("--config-env=user.name=N commit").unreadable.has_value());
  BOOST_TEST(git_arguments("difftool -x 'tools/d").unreadable.has_value());
  // Red team A15B-1: -C's directory is no subcommand, the -c after it is read; -C elsewhere,
  // --git-dir and --work-tree name another repository or directory than the one read.
  const GitArguments after_c = git_arguments("-C . -c core.hooksPath=hk commit");
  BOOST_TEST(!after_c.unreadable.has_value());
  BOOST_TEST_REQUIRE(after_c.config.size() == 1u);
  BOOST_TEST(after_c.config[0].first == "core.hookspath");
  BOOST_TEST(git_arguments("-C sub status").unreadable.has_value());
  BOOST_TEST(git_arguments("--git-dir=../o/.git status").unreadable.has_value());
  BOOST_TEST(git_arguments("--work-tree ../o status").unreadable.has_value());
  BOOST_TEST(git_arguments("--namespace ns -c core.hooksPath=hk commit").config.size() == 1u);
  for (const char* v :
       {"config core.hooksPath hk", "config --local --add core.HooksPath hk",
        "config set core.hooksPath hk", "config -f .git/config core.hooksPath hk"}) {
    const GitArguments set = git_arguments(v);
    BOOST_TEST_REQUIRE(set.config.size() == 1u, v);
    BOOST_TEST(set.config[0].first == "core.hookspath", v);
    BOOST_TEST(set.config[0].second.value_or("") == "hk", v);
  }
  BOOST_TEST(git_arguments("config --get core.hooksPath").config.empty());
}

// Red team A15B-1: a git behind a wrapper is read as git's command line; a value that sets
// git's configuration through the environment refuses.
BOOST_AUTO_TEST_CASE(a_git_behind_a_wrapper_or_configured_by_the_environment) {
  const auto wrapped = paths_in_command("timeout 60 git -c core.hooksPath=hk commit").git_commands;
  BOOST_TEST_REQUIRE(wrapped.size() == 1u);
  BOOST_TEST(wrapped[0].line == "\\-\\c \\c\\o\\r\\e\\.\\h\\o\\o\\k\\s\\P\\a\\t\\h\\=\\h\\k "
                                "\\c\\o\\m\\m\\i\\t");
  BOOST_TEST(!wrapped[0].more_arguments);
  for (const char* v :
       {"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=hk git commit",
        "GIT_CONFIG_PARAMETERS=\"'core.hookspath'='hk'\" git commit", "HOME=. git commit",
        "env XDG_CONFIG_HOME=. git commit", "nice GIT_DIR=../o/.git git status",
        "GIT_CONFIG_GLOBAL=gc git status"})
    BOOST_TEST(paths_in_command(v).unreadable.has_value(), v);
  BOOST_TEST(!paths_in_command("GIT_PAGER=cat git log").unreadable.has_value());
  // A command a program hands to a shell as one word (`watch`, `su -c`).
  BOOST_TEST(paths_in_command("watch 'git -c core.hooksPath=hk commit'").git_commands.size() == 1u);
}

// Red team A15B-2: the repository a subcommand connects to, past the options that take the
// next word as their value, and options after it.
BOOST_AUTO_TEST_CASE(the_repository_a_git_command_connects_to) {
  using R = std::vector<std::string>;
  auto repos = [](const char* v) { return git_arguments(v).repositories; };
  BOOST_TEST(repos("push -q pushdir HEAD:refs/heads/x") == (R{"pushdir"}));
  BOOST_TEST(repos("push -o ci.skip --force pushdir main") == (R{"pushdir"}));
  BOOST_TEST(repos("push --repo=r1 main") == (R{"r1", "main"}));
  BOOST_TEST(repos("push --repo r1") == (R{"r1"}));
  BOOST_TEST(repos("fetch --depth 1 ../other main") == (R{"../other"}));
  BOOST_TEST(repos("pull -s ours -X theirs up main") == (R{"up"}));
  BOOST_TEST(repos("clone -b main -o up --depth=1 src dest") == (R{"src"}));
  BOOST_TEST(repos("ls-remote --sort version:refname there") == (R{"there"}));
  BOOST_TEST(repos("archive --remote=r2 --format tar HEAD") == (R{"r2"}));
  BOOST_TEST(repos("archive --format=tar HEAD").empty());
  BOOST_TEST(repos("push -- -odd") == (R{"-odd"}));
  BOOST_TEST(repos("push").empty());
  BOOST_TEST(repos("log --oneline origin/main").empty());
  // Red team A15C-2..5: one matcher, as git's parse-options: a value letter ending or
  // inside a cluster, long options by a unique prefix, push's required
  // --recurse-submodules value, negations.
  BOOST_TEST(repos("push -qo opt pdA HEAD:x") == (R{"pdA"}));
  BOOST_TEST(repos("push -qoopt pdA HEAD:x") == (R{"pdA"}));
  BOOST_TEST(repos("push --push-opt opt pdB HEAD:x") == (R{"pdB"}));
  BOOST_TEST(repos("push --recurse-submodules check pdC HEAD:x") == (R{"pdC"}));
  BOOST_TEST(repos("push --rep=pdD") == (R{"pdD"}));
  BOOST_TEST(repos("push --re pdD") == (R{}));  // ambiguous: refused below
  BOOST_TEST(repos("push --no-verify --verify --no-force-with-lease pdE") == (R{"pdE"}));
  BOOST_TEST(repos("pull -r --log pdF main") == (R{"pdF"}));
  BOOST_TEST(repos("pull -Xours pdG") == (R{"pdG"}));
  BOOST_TEST(repos("fetch -j 4 pdH") == (R{"pdH"}));
  BOOST_TEST(repos("fetch --multiple a b c") == (R{"a", "b", "c"}));
  BOOST_TEST(repos("fetch a --multiple b") == (R{"a", "b"}));
  BOOST_TEST(repos("clone --bare --end-of-options src dst") == (R{"src"}));
  BOOST_TEST(repos("fetch-pack --depth=1 --upload-pack=x pdI main") == (R{"pdI"}));
  BOOST_TEST(repos("request-pull -p v1.0 pdJ main") == (R{"pdJ"}));
  BOOST_TEST(repos("remote update a b") == (R{"a", "b"}));
  BOOST_TEST(repos("remote -v show pdK") == (R{"pdK"}));
  BOOST_TEST(repos("archive --rem=pdL HEAD") == (R{"pdL"}));
  BOOST_TEST(repos("archive -vo out --remote pdM HEAD") == (R{"pdM"}));
  BOOST_TEST(repos("subtree push -P lib pdP main") == (R{"pdP"}));
  BOOST_TEST(repos("subtree split -P lib main").empty());
  BOOST_TEST(repos("submodule add -b main --name x pdQ sm") == (R{"pdQ"}));
  for (const char* v : {"push --re pdD", "push --frobnicate pdA", "push -qz pdA",
                        "fetch --de 1 pdA", "clone --no-such src"})
    BOOST_TEST(git_arguments(v).unreadable.has_value(), v);
  // A15C-7: `remote add`/`set-url` write a remote's url for the next git.
  const GitArguments add = git_arguments("remote add -f -t main x pdN");
  BOOST_TEST_REQUIRE(add.config.size() == 1u);
  BOOST_TEST(add.config[0].first == "remote.x.url");
  BOOST_TEST(add.config[0].second.value_or("") == "pdN");
  const GitArguments set = git_arguments("remote set-url --push origin pdO");
  BOOST_TEST_REQUIRE(set.config.size() == 1u);
  BOOST_TEST(set.config[0].first == "remote.origin.pushurl");
  for (const char* v : {"remote remove origin", "remote rename origin o2",
                        "config --unset remote.origin.url", "config --remove-section remote.origin",
                        "config remote.origin.url ''", "remote set-url --delete origin x"})
    BOOST_TEST(git_arguments(v).deconfigured_remotes == (R{"origin"}), v);
  // A15C-8: a shell expansion at the repository's place refuses; the user's own arguments
  // are theirs; A15C-10: a program that adds words at run time.
  using O = GitWordOrigin;
  BOOST_TEST(git_arguments("push ${R:-pd} main", {O::Literal, O::Expansion, O::Literal})
                 .unreadable.has_value());
  BOOST_TEST(git_arguments("push origin $B", {O::Literal, O::Literal, O::Expansion})
                 .repositories == (R{"origin"}));
  BOOST_TEST(git_arguments("push $1 main", {O::Literal, O::Argument, O::Literal}).repositories ==
             (R{"main"}));
  BOOST_TEST(git_arguments("push", {}, true).unreadable.has_value());
  const GitArguments users = git_arguments("remote add $1 $2", {O::Literal, O::Literal, O::Argument, O::Argument});
  BOOST_TEST((!users.unreadable && users.config.empty()));
  BOOST_TEST(git_arguments("remote add x $U", {O::Literal, O::Literal, O::Literal, O::Expansion})
                 .unreadable.has_value());
  BOOST_TEST(!git_arguments("log", {}, true).unreadable.has_value());
  const auto pushes = [](const char* v) {
    const auto c = paths_in_command(v);
    BOOST_TEST_REQUIRE(c.git_commands.size() == 1u, v);
    return c.git_commands[0];
  };
  BOOST_TEST(pushes("echo x | xargs git push").more_arguments);
  BOOST_TEST(pushes("find . -name x -exec git push {} ';'").more_arguments);
  BOOST_TEST(!pushes("timeout 9 git push x").more_arguments);
  BOOST_TEST((pushes("git push ${R:-pdN} main").origins ==
              std::vector<O>{O::Literal, O::Expansion, O::Literal}));
  BOOST_TEST((pushes("f() { git push \"$@\"; }; f").origins ==
              std::vector<O>{O::Literal, O::Argument}));
}

// A v2 index holding one gitlink entry `path` (a SHA-1 repository), as read-cache.c
// writes it: the header, the entry padded to 8 bytes with NULs, a checksum.
std::string index_with_gitlink(const std::string& path) {
  std::string s = std::string("DIRC") + std::string("\0\0\0\2\0\0\0\1", 8);
  std::string entry(62, '\0');
  entry[24 + 2] = '\xe0';  // mode 0160000, big-endian
  entry[60] = static_cast<char>(path.size() >> 8);
  entry[61] = static_cast<char>(path.size() & 0xff);
  entry += path;
  entry.append(8 - (entry.size() % 8), '\0');
  return s + entry + std::string(20, '\0');
}

// Red team A16-1..6 (round 16): values git reads as a repository that zpolicy read as
// something else.
BOOST_AUTO_TEST_CASE(repositories_round_16_found_are_read_as_git_reads_them) {
  using O = GitWordOrigin;
  using R = std::vector<std::string>;
  auto origins = [](const char* v) {
    std::vector<O> out;
    for (const auto& g : paths_in_command(v).git_commands) out.insert(out.end(), g.origins.begin(), g.origins.end());
    return out;
  };
  auto has = [](const std::vector<O>& os, O o) { return std::find(os.begin(), os.end(), o) != os.end(); };
  // A16-1: positional parameters the command gives words of its own are the shell's.
  for (const char* v : {"f() { git push \"$1\" HEAD; }; f pdA", "sh -c 'git push \"$1\"' sh pdB",
                        "set -- pdC; git push \"$1\"", "f() { git push \"$@\"; }; f pdF x",
                        "bash -c 'function f { git push \"$1\"; }; f pdG'"})
    BOOST_TEST((has(origins(v), O::Expansion) && !has(origins(v), O::Argument)), v);
  for (const char* v : {"f() { git push \"$1\" HEAD; }; f", "f() { git push \"$@\"; }; f \"$@\"",
                        "sh -c 'git push \"$1\"' -", "set -e; git push \"$1\"",
                        "set -euo pipefail; git push \"$1\""})
    BOOST_TEST((has(origins(v), O::Argument) && !has(origins(v), O::Expansion)), v);
  // A16-2: git's dashed programs, on a `!` alias's PATH.
  const auto dashed = paths_in_command("git-push pdD HEAD").git_commands;
  BOOST_TEST_REQUIRE(dashed.size() == 1u);
  BOOST_TEST(git_arguments(dashed[0].line, dashed[0].origins).repositories == (R{"pdD"}));
  BOOST_TEST(paths_in_command("nice /usr/lib/git-core/git-fetch pdE").git_commands.size() == 1u);
  // A16-3: `--shallow-file` takes a value; `--bare` makes the directory git runs in the
  // repository.
  BOOST_TEST(git_arguments("--shallow-file x push pdE HEAD").repositories == (R{"pdE"}));
  BOOST_TEST(git_arguments("--bare ls-remote o").unreadable.has_value());
  // A16-8: receive-pack runs the hooks of the repository it is given.
  BOOST_TEST(git_arguments("receive-pack --quiet pdR").repositories == (R{"pdR"}));
  // A16-7: a remote group in a subsection (`git remote update a.b`).
  BOOST_TEST((role("[remotes \"a\"]\nb = x y\n") == GitConfigRole::RemoteGroup));
  // A16-4: git url-decodes a file:// URL.
  BOOST_TEST(git_url("file:///srv/p%64A%2F").path.value_or("") == "/srv/pdA/");
  BOOST_TEST(git_url("file:///srv/a%00b%zz").path.value_or("") == "/srv/a%00b%zz");
  BOOST_TEST(git_url("file://%2Fsrv/r").path.value_or("") == "/srv/r");
  // A16-5: a rewrite base the rest of a URL decides refuses; each rewrite of a URL read is
  // read.
  for (const char* base : {"", "ext:", "e", "file:", "file:/"}) {
    zpolicy::test::TempDir d;
    d.write(".git/config", std::string("[url \"") + base + "\"]\n\tinsteadOf = zz:\n");
    BOOST_TEST(walk(d).refusals.size() == 1u, base);
  }
  zpolicy::test::TempDir rewritten;
  rewritten.write(".git/config", "[url \"/usr/\"]\n\tinsteadOf = zz:\n[remote \"r\"]\n\turl = zz:.." +
                                     rewritten.str() + "/pdI\n");
  const Walked rw = walk(rewritten);
  BOOST_TEST(rw.refusals.empty());
  BOOST_TEST((std::find(rw.targets.begin(), rw.targets.end(), rewritten / "pdI") != rw.targets.end()));
  // A16-6: each submodule the index records: an unpopulated one's directory, a populated
  // one's `.git`.
  zpolicy::test::TempDir sub;
  sub.write(".git/config", "");
  sub.write(".git/index", index_with_gitlink("lib/pdS"));
  const Walked sw = walk(sub);
  BOOST_TEST(sw.refusals.empty());
  BOOST_TEST((std::find(sw.targets.begin(), sw.targets.end(), sub / "lib/pdS") != sw.targets.end()));
  sub.write("lib/pdS/.git", "gitdir: ../../.git/modules/pdS\n");
  const Walked populated = walk(sub);
  BOOST_TEST((std::find(populated.targets.begin(), populated.targets.end(), sub / "lib/pdS/.git") !=
              populated.targets.end()));
  BOOST_TEST((std::find(populated.targets.begin(), populated.targets.end(), sub / "lib/pdS") ==
              populated.targets.end()));
  zpolicy::test::TempDir bad;
  bad.write(".git/config", "");
  bad.write(".git/index", "DIRC\0\0\0\7");
  BOOST_TEST(walk(bad).refusals.size() == 1u);
}

// Red team R17-2, R17-4 (round 17): an index a sandbox wrote is read only as far as git
// would have written it, never held whole, never over 256 MiB; a gitlink git never writes
// refuses; a split index's replaced entries (empty names) are named by its shared index.
BOOST_AUTO_TEST_CASE(indexes_round_17_found_are_read_as_far_as_git_wrote_them) {
  zpolicy::test::TempDir d;
  auto with_size = [&](const std::string& head, off_t size) {
    const std::string path = d.write("index", head);
    BOOST_TEST_REQUIRE(truncate(path.c_str(), size) == 0);
    return zpolicy::compiler::gitlinks_of_index(path, 20);
  };
  // A valid header, then a sparse tail: zeros are no extension git reads, no entry it writes.
  for (const uint32_t count : {0u, 7u, 0xffffffffu}) {
    const char c[4] = {static_cast<char>(count >> 24), static_cast<char>(count >> 16),
                       static_cast<char>(count >> 8), static_cast<char>(count)};
    const auto links =
        with_size(std::string("DIRC\0\0\0\2", 8) + std::string(c, 4), off_t{200} << 20);
    BOOST_TEST(links.unreadable.has_value(), count);
    BOOST_TEST(links.paths.empty());
  }
  const auto large = with_size("DIRC", off_t{300} << 20);
  BOOST_TEST(large.unreadable.value_or("").find("larger than 256 MiB") != std::string::npos);
  for (const char* name : {"..", ".", "a/../b", "a//b", "/abs", "x/.GIT/y", ""}) {
    d.write("index", index_with_gitlink(name));
    BOOST_TEST(zpolicy::compiler::gitlinks_of_index(d / "index", 20).unreadable.has_value(), name);
  }
  // More gitlinks than a run can mount (R17-2: the protected paths are compared pairwise).
  std::string many = "DIRC" + std::string("\0\0\0\2\0\0\x10\x01", 8);
  for (int i = 0; i < 4097; ++i) {
    std::string one = index_with_gitlink("m" + std::to_string(10000 + i));
    many += one.substr(12, one.size() - 12 - 20);
  }
  d.write("index", many + std::string(20, '\0'));
  BOOST_TEST(zpolicy::compiler::gitlinks_of_index(d / "index", 20)
                 .unreadable.value_or("")
                 .find("more than 4096 submodules") != std::string::npos);
  d.write("index", index_with_gitlink("lib/sub"));
  BOOST_TEST(zpolicy::compiler::gitlinks_of_index(d / "index", 20).paths ==
             std::vector<std::string>{"lib/sub"});
  // A split index whose only entry replaces its shared index's `lib` (an empty name), with
  // the `link` extension naming the shared index by its hash.
  std::string split = index_with_gitlink("");
  split.resize(split.size() - 20);
  split += std::string("link\0\0\0\x16", 8) + std::string(20, '\xab') + std::string(2, '\0') +
           std::string(20, '\0');
  d.write("index", split);
  std::string hex;
  for (int i = 0; i < 20; ++i) hex += "ab";
  d.write("sharedindex." + hex, index_with_gitlink("lib"));
  const auto links = zpolicy::compiler::gitlinks_of_index(d / "index", 20);
  BOOST_TEST(!links.unreadable.has_value(), links.unreadable.value_or(""));
  BOOST_TEST(links.paths == std::vector<std::string>{"lib"});
}

// Red team R17-7 (round 17): includes that multiply stop at git's depth or at what zpolicy
// reads in all, and a config's URLs and aliases are looked up, not rescanned: each of these
// took a minute or more (or 2.6 GB) before.
BOOST_AUTO_TEST_CASE(config_includes_and_lookups_round_17_found_are_bounded) {
  zpolicy::test::TempDir self;
  std::string eight = "[include]\n";
  for (int i = 0; i < 8; ++i) eight += "\tpath = config\n";
  self.write(".git/config", eight);
  const Walked deep = walk(self);
  BOOST_TEST(deep.refusals.size() == 1u);
  BOOST_TEST(deep.refusals.at(0).find("nest deeper than 10") != std::string::npos);
  zpolicy::test::TempDir fan;
  for (int k = 0; k < 5; ++k) {
    std::string text = "[include]\n";
    for (int i = 0; i < 8; ++i) text += "\tpath = c" + std::to_string(k + 1) + "\n";
    fan.write(".git/c" + std::to_string(k), text);
  }
  fan.write(".git/c5", "[core]\n\tbare = false\n");
  fan.write(".git/config", "[include]\n\tpath = c0\n");
  const Walked wide = walk(fan);
  BOOST_TEST(wide.refusals.size() == 1u);
  BOOST_TEST(wide.refusals.at(0).find("more than 256 files") != std::string::npos);
  // Many remotes and aliases, one rewrite: every URL rewritten, every alias read.
  zpolicy::test::TempDir many;
  std::string text = "[url \"" + many.str() + "/\"]\n\tinsteadOf = zz:\n";
  for (int i = 0; i < 3000; ++i)
    text += "[remote \"r" + std::to_string(i) + "\"]\n\turl = zz:p" + std::to_string(i) +
            "\n[alias]\n\ta" + std::to_string(i) + " = !git push r" + std::to_string(i) + "\n";
  many.write(".git/config", text);
  const Walked w = walk(many);
  BOOST_TEST(w.refusals.empty());
  for (const int i : {0, 1234, 2999})
    BOOST_TEST((std::find(w.targets.begin(), w.targets.end(), many / ("p" + std::to_string(i))) !=
                w.targets.end()),
               i);
}

// Red team A15C-1, A15C-6, A15C-9, A15C-10: the keys that name the remote a plain git
// command connects to, what counts as a configured remote, and git in each submodule.
BOOST_AUTO_TEST_CASE(a_remote_name_that_is_no_configured_remote_is_a_path) {
  for (const char* text :
       {"[branch \"main\"]\nremote = x\n", "[branch \"a/b\"]\npushRemote = x\n",
        "[remote]\npushDefault = x\n"})
    BOOST_TEST((role(text) == GitConfigRole::Remote), text);
  BOOST_TEST((role("[remotes]\nall = a b\n") == GitConfigRole::RemoteGroup));
  BOOST_TEST((role("[svn-remote \"svn\"]\nurl = file:///x\n") == GitConfigRole::Url));
  BOOST_TEST((role("[branch \"main\"]\nmerge = refs/heads/main\n") == GitConfigRole::None));
  const std::string origin = "[remote \"origin\"]\n\turl = https://example.invalid/r\n";
  for (const auto& [config, name] : std::vector<std::pair<std::string, std::string>>{
           {"[branch \"main\"]\n\tremote = pdA\n", "pdA"},
           {origin + "[branch \"other\"]\n\tpushRemote = pdB\n", "pdB"},
           {origin + "[remote]\n\tpushDefault = pdC\n", "pdC"},
           {origin + "[remotes]\n\tall = origin pdD\n", "pdD"},
           {"[remote \"pdE\"]\n\tfetch = +refs/heads/*:refs/remotes/pdE/*\n"
            "[alias]\n\tt = push pdE HEAD\n", "pdE"},
           {"[remote \"pdF\"]\n\tpushurl = https://example.invalid/r\n\turl =\n"
            "[branch \"main\"]\n\tremote = pdF\n", "pdF"},
           {"[includeIf \"onbranch:other\"]\n\tpath = other.cfg\n[alias]\n\tt = push pdG HEAD\n",
            "pdG"},
           {origin + "[alias]\n\tt = !git remote remove origin && git push origin\n", "origin"},
           {"[alias]\n\tt = !git remote add x pdH && git push x\n", "pdH"},
           {origin + "[alias]\n\tt = push -qo opt pdI HEAD\n", "pdI"},
           {"[remote \"pdT\"]\n\tpushurl = https://example.invalid/r\n", "pdT"},
           // An alias whose subcommand is another alias runs it with its words.
           {origin + "[alias]\n\tPP = push -q\n\tt = pp pdU HEAD\n", "pdU"}}) {
    zpolicy::test::TempDir top;
    top.write(".git/config", config);
    top.write(".git/other.cfg", "[remote \"pdG\"]\n\turl = https://example.invalid/r\n");
    const Walked w = walk(top);
    BOOST_TEST(w.refusals.empty(), config << ": " << w.refusals.front());
    BOOST_TEST((std::find(w.targets.begin(), w.targets.end(), top / name) != w.targets.end()),
               config);
  }
  // A configured remote's name is no path: `origin` stays the sandbox's to write.
  zpolicy::test::TempDir top;
  top.write(".git/config", origin + "[branch \"main\"]\n\tremote = origin\n\tpushRemote = .\n"
                                    "[alias]\n\tp = push origin main\n");
  const Walked w = walk(top);
  BOOST_TEST(w.refusals.empty());
  BOOST_TEST((std::find(w.targets.begin(), w.targets.end(), top / "origin") == w.targets.end()));
  for (const char* alias : {"!git submodule foreach git push pdQ HEAD",
                            "submodule foreach -q git push pdR HEAD",
                            "!git submodule foreach 'git -c core.hooksPath=h commit'",
                            "!git push ${R:-pdN} HEAD", "!echo pdS | xargs git push"}) {
    zpolicy::test::TempDir d;
    d.write(".git/config", std::string("[alias]\n\tt = ") + alias + "\n");
    BOOST_TEST(walk(d).refusals.size() == 1u, alias);
  }
  // Red team A15C-12: the legacy `remotes/<name>` and `branches/<name>` files name remotes
  // too: their URLs are read, their names are configured.
  zpolicy::test::TempDir legacy;
  legacy.write(".git/config", "[alias]\n\ta = push up HEAD\n\tb = push br HEAD\n");
  legacy.write(".git/remotes/up", "URL: pdW\nPush: HEAD\n");
  legacy.write(".git/branches/br", "../pdX#main\n");
  const Walked lw = walk(legacy);
  BOOST_TEST(lw.refusals.empty());
  for (const char* name : {"pdW", "../pdX"})
    BOOST_TEST((std::find(lw.targets.begin(), lw.targets.end(),
                          std::filesystem::weakly_canonical(legacy / name).string()) != lw.targets.end()),
               name);
  for (const char* name : {"up", "br"})
    BOOST_TEST((std::find(lw.targets.begin(), lw.targets.end(), legacy / name) == lw.targets.end()),
               name);
  zpolicy::test::TempDir chained;
  chained.write(".git/config", "[alias]\n\tf = \"!f() { git push \\\"$1\\\" HEAD; }; f\"\n\tt = f pdV\n");
  BOOST_TEST(walk(chained).refusals.size() == 1u);
  // A shell alias that does not read its words by position has them appended; a loop of
  // aliases stops.
  zpolicy::test::TempDir appended;
  appended.write(".git/config", "[alias]\n\tp = !git push -q\n\tt = p pdY HEAD\n"
                                "\ta = !git b x\n\tb = !git a y\n\tc = d\n\td = c\n");
  const Walked aw = walk(appended);
  BOOST_TEST((std::find(aw.targets.begin(), aw.targets.end(), appended / "pdY") != aw.targets.end()));
  BOOST_TEST(aw.refusals.size() == 4u);
  zpolicy::test::TempDir pull;
  pull.write(".git/config", "[alias]\n\tt = submodule foreach git pull\n");
  BOOST_TEST(walk(pull).refusals.empty());
}

// Red team A23-2: a legacy remotes file that is a symlink is read through, as git reads it,
// and its target is a target (protected as a config file is). The dangling one's refusal
// needs the resolver's canonical form (the link itself): kernel_attack23.
BOOST_AUTO_TEST_CASE(a_legacy_remotes_file_that_is_a_symlink_is_read_through_and_protected) {
  zpolicy::test::TempDir top;
  top.write(".git/config", "[alias]\n\ta = push up HEAD\n");
  top.write(".origin", "URL: pdZ\n");
  std::filesystem::create_directories(top / ".git/remotes");
  std::filesystem::create_symlink(top / ".origin", top / ".git/remotes/up");
  const Walked w = walk(top);
  BOOST_TEST(w.refusals.empty());
  for (const char* name : {".origin", "pdZ"})
    BOOST_TEST(
        (std::find(w.targets.begin(), w.targets.end(),
                   std::filesystem::weakly_canonical(top / name).string()) != w.targets.end()),
        name);
}

BOOST_AUTO_TEST_CASE(remote_urls_are_classified_as_git_connects) {
  BOOST_TEST(git_url("ext::sh -c tools/x% y %S").command.value_or("") ==
             "'sh' '-c' 'tools/x y' 'git-upload-pack'");
  BOOST_TEST(git_url("ext::tools/x %G/repo").command.value_or("") == "'tools/x'");
  BOOST_TEST(git_url("ext::x %q").unreadable.has_value());
  BOOST_TEST(git_url("../other").path.value_or("") == "../other");
  BOOST_TEST(git_url("other").path.value_or("") == "other");
  BOOST_TEST(git_url("/srv/r.git").path.value_or("") == "/srv/r.git");
  BOOST_TEST(git_url("file:///srv/r").path.value_or("") == "/srv/r");
  BOOST_TEST(git_url("~/r").path.value_or("") == "~/r");
  for (const char* other : {"https://h/r", "ssh://h/r", "h:dir/r", "git@h:r.git", "fd::3",
                            "persistent-https::h/r"}) {
    const GitUrl u = git_url(other);
    BOOST_TEST((!u.command && !u.path && !u.unreadable), other);
  }
  BOOST_TEST(git_url("file://host/r").unreadable.has_value());
  BOOST_TEST(git_url("~other/r").unreadable.has_value());
}

// Red team A15-G1: a program that runs another hid the interpreter behind options zpolicy
// does not know (`timeout 10 python3 -m x` imported a planted x.py on the host's `git add`).
BOOST_AUTO_TEST_CASE(an_interpreter_behind_another_program_is_read_as_one) {
  for (const char* value :
       {"timeout 10 python3 -m nbfilter", "nice -n 5 python3 -m x", "stdbuf -o0 perl -Ilib /opt/x",
        "exec -a name python3 -m x", "command -p sh x.sh", "xargs -0 node x.js",
        "setsid ruby -rfoo /opt/x", "timeout 5 sh -c 'python3 -m x'",
        // A15-G6: the program named by a parameter expansion or a glob.
        "${PY:-python3} -m nbfilter", "\"$PYTHON\" -m x", "pytho? -m x"})
    BOOST_TEST(paths_in_command(value).unreadable.has_value(), value);
  using W = std::vector<std::string>;
  const auto abs = paths_in_command("timeout 10 python3 /opt/nb/nbfilter --x");
  BOOST_TEST(!abs.unreadable);
  BOOST_TEST(abs.scripts == (W{"/opt/nb/nbfilter"}));
  BOOST_TEST(paths_in_command("nice sh -c 'tools/x --y'").words == (W{"tools/x"}));
  BOOST_TEST(!paths_in_command("timeout 10 git-lfs filter-process").unreadable);
  BOOST_TEST(!paths_in_command("!f() { [ -n \"$1\" ] && git log \"$1\"; }; f").unreadable);
  BOOST_TEST(!paths_in_command("![[ -t 1 ]] && git log").unreadable);
}

// Red team A15-G2: sed and awk run a program file named by an option, found in the
// directory git runs them in (`sed -f strip.sed`: GNU sed's `e` ran a planted command).
BOOST_AUTO_TEST_CASE(a_program_file_of_sed_or_awk_is_read_as_a_script) {
  for (const char* value : {"sed -f strip.sed", "sed --file=strip.sed", "sed -nf strip.sed",
                            "sed -fstrip.sed", "awk -f conv.awk", "gawk -i lib.awk -f /opt/x",
                            "timeout 5 awk --load=ext.so", "sed -f"})
    BOOST_TEST(paths_in_command(value).unreadable.has_value(), value);
  using W = std::vector<std::string>;
  const auto abs = paths_in_command("sed -n -f /opt/f/strip.sed");
  BOOST_TEST(!abs.unreadable);
  BOOST_TEST(abs.scripts == (W{"/opt/f/strip.sed"}));
  for (const char* value : {"sed -e 's/a/b/'", "sed -n p", "awk -F: '{print $1}'",
                            "awk -vfoo=1 '{print}'", "sed -es/f/g/"})
    BOOST_TEST(!paths_in_command(value).unreadable, value);
}

// Red team A15-G4: a script run through its `#!` line by python (its directory first on the
// import path) took a module the sandbox planted beside it.
BOOST_AUTO_TEST_CASE(a_shebang_names_an_interpreter_that_loads_code_beside_its_script) {
  auto loads = [](const char* line) {
    const auto s = shebang_of(line);
    return s && s->loads_code_by_name;
  };
  for (const char* line : {"#!/usr/bin/env python3", "#!/usr/bin/python3 -u", "#! /usr/bin/perl -w",
                           "#!/usr/bin/env -S node --no-warnings", "#!/usr/bin/env FOO=1 ruby"})
    BOOST_TEST(loads(line), line);
  for (const char* line : {"#!/bin/sh", "#!/usr/bin/env bash", "#!/usr/bin/env", "#!", "",
                           "python3", "# !/usr/bin/python3"})
    BOOST_TEST(!loads(line), line);
}

BOOST_AUTO_TEST_CASE(targets_resolve_as_git_resolves_them) {
  zpolicy::test::TempDir top;
  top.write(".git/HEAD", "ref: refs/heads/main\n");
  top.write(".git/config",
            "[core]\n\thooksPath = hooks\n\tworktree = ../wt2\n\teditor = ~/bin/ed\n"
            "[include]\n\tpath = ../inc.cfg\n");
  top.write("inc.cfg", "[alias]\n\tx = \"!bin/run --x\"\n[includeIf \"onbranch:x\"]\n\tpath = sub/gone.cfg\n");
  const Walked w = walk(top);
  BOOST_TEST(w.refusals.empty(), w.refusals.front());
  const std::string t = top.str(), wt = t + "/wt2";
  std::vector<std::string> want = {t + "/.git/config", t + "/inc.cfg",  t + "/sub/gone.cfg",
                                   t + "/hooks",       wt + "/hooks",   t + "/bin/run",
                                   wt + "/bin/run",    "/home/u/bin/ed"};
  std::sort(want.begin(), want.end());
  BOOST_TEST(w.targets == want);
}

// An alias's `-c` is read as a key of its line; a URL names a repository (A14B-4).
BOOST_AUTO_TEST_CASE(what_an_alias_or_a_url_names_resolves_as_git_resolves_it) {
  zpolicy::test::TempDir top;
  top.write(".git/config",
            "[alias]\n\th = -c core.hooksPath=h2 -c 'alias.y=difftool -x y/d' y\n"
            "\tr = rebase --exec \"tools/r --a\"\n\ts = !git -c core.hooksPath=h3 status\n"
            "[remote \"o\"]\n\turl = ext::tools/ext %S\n\tpushurl = ../up\n"
            "[hook \"p\"]\n\tcommand = git push o HEAD:refs/heads/x\n");
  const Walked w = walk(top);
  BOOST_TEST(w.refusals.empty(), w.refusals.front());
  const std::string t = top.str();
  std::vector<std::string> want = {t + "/.git/config", t + "/h2",        t + "/y/d",
                                   t + "/tools/r",     t + "/tools/ext",  t + "/h3", std::filesystem::weakly_canonical(t + "/../up").string()};
  std::sort(want.begin(), want.end());
  BOOST_TEST(w.targets == want);
  for (const auto& [config, line] : std::vector<std::pair<std::string, std::string>>{
           {"[url \"ext::sh -c x/y\"]\n\tinsteadOf = https://\n", ".git/config:2:"},
           {"[alias]\n\tf = submodule foreach tools/x\n", ".git/config:2:"},
           {"[alias]\n\tg = -c core.sshCommand=$X/ssh fetch\n", ".git/config:2:"},
           // Red team A15-G3: a `git -c` inside a shell command value.
           {"[alias]\n\tg = !git -c core.fsmonitor='python3 -m fsm' status\n", ".git/config:2:"},
           {"[remote \"o\"]\n\n\turl = file://h/r\n", ".git/config:3:"}}) {
    zpolicy::test::TempDir d;
    d.write(".git/config", config);
    const Walked r = walk(d);
    BOOST_TEST_REQUIRE(r.refusals.size() == 1u, config);
    BOOST_TEST(r.refusals[0].find(d / line) == 0u, r.refusals[0]);
  }
}

BOOST_AUTO_TEST_CASE(includes_nest_as_deep_as_gits_limit) {
  zpolicy::test::TempDir top;
  top.write(".git/config", "[include]\npath = ../i1\n");
  for (int i = 1; i <= kGitIncludeMaxDepth; ++i)
    top.write("i" + std::to_string(i), "[include]\npath = i" + std::to_string(i + 1) + "\n");
  BOOST_TEST(walk(top).refusals.empty());  // the 11th is missing: git skips it
  top.write("i" + std::to_string(kGitIncludeMaxDepth + 1), "[a]\nk = 1\n");
  const Walked w = walk(top);
  BOOST_TEST_REQUIRE(w.refusals.size() == 1u);
  BOOST_TEST(w.refusals[0].find("deeper than 10") != std::string::npos, w.refusals[0]);
}

BOOST_AUTO_TEST_CASE(what_cannot_be_read_soundly_is_refused_at_its_line) {
  for (const auto& [config, line] : std::vector<std::pair<std::string, std::string>>{
           {"[core]\n\tpager = less \\q\n", ".git/config:2:"},
           {"[core]\n\n\thooksPath = %(prefix)/h\n", ".git/config:3:"},
           {"[include]\n\tpath = ~other/x\n", ".git/config:2:"},
           {"[include]\n\tpath\n", ".git/config:2:"},
           {"[gpg]\n\tprogram = $X/gpg\n", ".git/config:2:"},
           {"[filter \"nb\"]\n\tclean = python3 -m nbstripout\n", ".git/config:2:"}}) {
    zpolicy::test::TempDir top;
    top.write(".git/config", config);
    const Walked w = walk(top);
    BOOST_TEST_REQUIRE(w.refusals.size() == 1u, config);
    BOOST_TEST(w.refusals[0].find(top / line) == 0u, w.refusals[0]);
  }
}

// git reads nothing from a directory (it dies on a config file that is one): an include
// that is a directory, such as a run's placeholder for a missing one, is protected and not
// refused.
BOOST_AUTO_TEST_CASE(an_include_that_is_a_directory_is_protected_and_read_as_nothing) {
  zpolicy::test::TempDir top;
  top.write(".git/config", "[include]\n\tpath = ../inc.cfg\n");
  top.write("inc.cfg/x", "[core]\n\thooksPath = /elsewhere\n");
  const Walked w = walk(top);
  BOOST_TEST(w.refusals.empty());
  BOOST_TEST((std::find(w.targets.begin(), w.targets.end(), top / "inc.cfg") != w.targets.end()));
  BOOST_TEST((std::find(w.targets.begin(), w.targets.end(), "/elsewhere") == w.targets.end()));
}

BOOST_AUTO_TEST_SUITE_END()
