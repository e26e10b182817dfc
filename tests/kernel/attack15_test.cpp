#include <unistd.h>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <string>
#include <utility>

#include "sandbox_fixture.hpp"

// Red team round 15 (docs/redteam-2026-12.md): what session 14 landed, attacked. Each case
// is a finding's reproduction, observed from the host.
namespace zpolicy::tests::kernel {
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(kernel_attack15)

// A15-G1: git's command values were read as interpreters only when the interpreter was
// the program (or followed env, exec, command, nohup, time); behind a program that runs
// another (`timeout 10 python3 -m nbfilter`, `exec -a NAME python3 ...`) nothing was
// protected and the run went ahead. The sandbox planted nbfilter.py at the worktree top
// and the host's next `git add` of a filtered file imported it (both callers). Now the
// first word naming an interpreter is read as one: the module form refuses the run. A15-G6:
// the interpreter named by a parameter expansion (`${PY:-python3}`), the same way; now a
// program only a shell resolves refuses.
BOOST_DATA_TEST_CASE(an_interpreter_behind_another_program_refuses_the_run, bdata::make(kCallers),
                     caller) {
  for (const char* clean : {"timeout 10 python3 -m nbfilter", "exec -a nb python3 -m nbfilter",
                            "${PY:-python3} -m nbfilter"}) {
    Sandbox box(caller);
    box.make_dir(box.ws(".git"));
    box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
    box.write_file(box.ws(".git/config"),
                   std::string("[filter \"nb\"]\n\tclean = ") + clean + "\n");
    box.write_file(box.ws(".gitattributes"), "*.ipynb filter=nb\n");
    const RunResult r = box.sh("echo 'import os' > nbfilter.py; echo ran > ran");
    BOOST_TEST(!exists(box.ws("nbfilter.py")), clean << ": planted: " << r.describe());
    BOOST_TEST(!exists(box.ws("ran")), clean << ": the command ran: " << r.describe());
    BOOST_TEST(r.exit_code == 2, clean << ": " << r.describe());
    BOOST_TEST(r.err.find(box.ws(".git/config") + ":2:") != std::string::npos,
               clean << ": " << r.describe());
  }
}

// A15-G2: sed and awk run a program file named by `-f`, found in the directory git runs
// them in, and only words with a '/' were protected: with `filter.sd.clean = sed -f
// strip.sed` the sandbox wrote `1e touch …` into strip.sed and the host's next `git add`
// ran it (GNU sed's `e`), likewise awk's system() (both callers). Now refused.
BOOST_DATA_TEST_CASE(a_program_file_of_sed_or_awk_refuses_the_run, bdata::make(kCallers), caller) {
  for (const char* clean : {"sed -f strip.sed", "awk -f strip.sed"}) {
    Sandbox box(caller);
    box.make_dir(box.ws(".git"));
    box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
    box.write_file(box.ws(".git/config"),
                   std::string("[filter \"sd\"]\n\tclean = ") + clean + "\n");
    const RunResult r = box.sh("echo '1e true' > strip.sed; echo ran > ran");
    BOOST_TEST(!exists(box.ws("strip.sed")), clean << ": planted: " << r.describe());
    BOOST_TEST(!exists(box.ws("ran")), clean << ": the command ran: " << r.describe());
    BOOST_TEST(r.exit_code == 2, clean << ": " << r.describe());
  }
}

// A15-G4: a script a command value names (or a hook links to) was protected as a file, but
// the interpreter its `#!` line starts (python) puts the script's directory first on its
// import path: the sandbox wrote tools/json.py beside a clean filter doing `import json`, and
// the host's next `git add` of a filtered file ran it (both callers). Now such a script in a
// directory the sandbox can write refuses the run; a shell script does not (control).
BOOST_DATA_TEST_CASE(a_script_whose_interpreter_loads_code_beside_it_refuses_the_run,
                     bdata::make(kCallers), caller) {
  const std::string python = "#!/usr/bin/env python3\nimport sys, json\n";
  for (const char* member : {"filter", "hook"}) {
    Sandbox box(caller);
    box.make_dir(box.ws(".git/hooks"));
    box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
    box.write_file(box.ws(".git/config"), "[filter \"j\"]\n\tclean = tools/clean\n");
    box.make_dir(box.ws("tools"));
    box.write_file(box.ws("tools/clean"), "#!/bin/sh\ncat\n", 0755);
    box.write_file(box.ws("tools/pre-commit.py"), python, 0755);
    if (std::string(member) == "filter")
      box.write_file(box.ws("tools/clean"), python, 0755);
    else
      BOOST_REQUIRE(symlink("../../tools/pre-commit.py", box.ws(".git/hooks/pre-commit").c_str()) ==
                    0);
    const RunResult r = box.sh("echo 'import os' > tools/json.py; echo ran > ran");
    BOOST_TEST(!exists(box.ws("tools/json.py")), member << ": planted: " << r.describe());
    BOOST_TEST(!exists(box.ws("ran")), member << ": the command ran: " << r.describe());
    BOOST_TEST(r.exit_code == 2, member << ": " << r.describe());
  }
  Sandbox box(caller);
  box.make_dir(box.ws(".git"));
  box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
  box.write_file(box.ws(".git/config"), "[filter \"j\"]\n\tclean = tools/clean\n");
  box.make_dir(box.ws("tools"));
  box.write_file(box.ws("tools/clean"), "#!/bin/sh\ncat\n", 0755);
  const RunResult r = box.sh("echo ok > tools/other");
  BOOST_TEST(r.completed(), "a shell script's directory: " << r.describe());
  BOOST_TEST(read_file(box.ws("tools/other")).value_or("") == "ok\n", r.describe());
}

// A15B-1 (round 15b): a `!` alias's git command zpolicy did not read as git's command line:
// git behind a wrapper (`timeout 60 git -c core.hooksPath=hk commit`), git's configuration
// given through its environment (GIT_CONFIG_COUNT/KEY/VALUE, GIT_CONFIG_PARAMETERS, a HOME
// whose .gitconfig the sandbox writes), git's `-C DIR` before `-c` (DIR was taken for the
// subcommand), and a key set by `git config KEY VALUE` for the next git. The sandbox wrote
// hk/pre-commit (or .gitconfig) at the worktree top and the host's next `git c` ran it
// (both callers). Now the wrapped, `-C .` and `git config` forms are read as git's command
// line (hk is protected), the environment's forms refuse the run.
BOOST_DATA_TEST_CASE(a_git_command_behind_a_wrapper_or_configured_by_its_environment_is_read,
                     bdata::make(kCallers), caller) {
  const std::pair<const char*, const char*> members[] = {
      {"!timeout 60 git -c core.hooksPath=hk commit", "hk/pre-commit"},
      {"!GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=hk git commit",
       "hk/pre-commit"},
      {"!GIT_CONFIG_PARAMETERS=\\\"'core.hookspath'='hk'\\\" git commit", "hk/pre-commit"},
      {"!HOME=. git commit", ".gitconfig"},
      {"!git -C . -c core.hooksPath=hk commit", "hk/pre-commit"},
      {"!git config core.hooksPath hk && git commit", "hk/pre-commit"}};
  for (const auto& [alias, planted] : members) {
    Sandbox box(caller);
    box.make_dir(box.ws(".git"));
    box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
    box.write_file(box.ws(".git/config"), std::string("[alias]\n\tc = ") + alias + "\n");
    const RunResult r =
        box.sh("mkdir -p hk; echo 'touch ran' > hk/pre-commit; echo '[core]' > .gitconfig");
    BOOST_TEST(!exists(box.ws(planted)), alias << ": planted " << planted << ": " << r.describe());
  }
}

// A15B-2: an alias that pushes to or fetches from a repository named by a bare word (`!git
// push pushdir HEAD:x`, the non-'!' `push pushdir HEAD:x`): git takes a name that is no
// configured remote for a path at the top, so the sandbox made a bare `pushdir` whose
// pre-receive hook the host's next `git p` ran (both callers). Now the names git would try
// there are protected as a remote URL's are; a configured remote's name is not (control).
BOOST_DATA_TEST_CASE(an_aliass_repository_named_by_a_bare_word_is_protected,
                     bdata::make(kCallers), caller) {
  const char* members[] = {"!git push -q pushdir HEAD:refs/heads/x",
                           "push -q --repo pushdir HEAD:refs/heads/x",
                           "fetch --depth 1 pushdir main", "push pushdir --force"};
  for (const char* alias : members) {
    Sandbox box(caller);
    box.make_dir(box.ws(".git"));
    box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
    box.write_file(box.ws(".git/config"),
                   std::string("[remote \"origin\"]\n\turl = https://example.invalid/r\n"
                               "[alias]\n\tp = ") +
                       alias + "\n\to = push origin main\n");
    const RunResult r = box.sh(
        "git init -q --bare pushdir 2>/dev/null; test -e origin && echo seen > origin-seen; true");
    BOOST_TEST(!exists(box.ws("pushdir/hooks")), alias << ": made pushdir: " << r.describe());
    BOOST_TEST(r.completed(), alias << ": " << r.describe());
    BOOST_TEST(!exists(box.ws("origin-seen")), "a configured remote's name was protected");
  }
}

// A15C-1..10 (round 15c): repositories the host's git connects to, named by a value
// zpolicy did not read as one: the keys a plain `git push` obeys (`branch.<b>.remote`,
// `remote.pushDefault`, `branch.<b>.pushRemote`), an alias's operand behind a value letter
// ending a cluster, an abbreviated option or push's `--recurse-submodules VALUE`, a remote
// with no url, `git remote add`, a remote only an `includeIf` defines, and (found while
// fixing) a legacy `.git/remotes/<name>` file's URL and an alias run as another alias's
// subcommand with its words (`i = pp pdM`). The sandbox made a bare repository of that
// name whose pre-receive the host's next push ran (both callers).
// Now each name is protected as a remote URL's path is; a shell expansion at the
// repository's place, `submodule foreach git push NAME` and `xargs git push` refuse the run.
// A v2 index with one gitlink entry `path` (SHA-1), as read-cache.c writes it.
std::string index_with_gitlink(const std::string& path) {
  std::string entry(62, '\0');
  entry[26] = '\xe0';  // mode 0160000, big-endian
  entry[61] = static_cast<char>(path.size());
  entry += path;
  entry.append(8 - entry.size() % 8, '\0');
  return std::string("DIRC\0\0\0\2\0\0\0\1", 12) + entry + std::string(20, '\0');
}

BOOST_DATA_TEST_CASE(a_repository_named_by_a_value_not_read_as_one_is_protected,
                     bdata::make(kCallers), caller) {
  {
    Sandbox box(caller);
    box.make_dir(box.ws(".git"));
    box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
    box.write_file(box.ws(".git/other.cfg"), "[remote \"pdJ\"]\n\turl = https://example.invalid/r\n");
    // Round 16: a submodule the index records and no `pdS/.git` exists for (A16-6).
    box.write_file(box.ws(".git/index"), index_with_gitlink("pdS"));
    box.write_file(box.ws(".git/config"),
                   // Round 16: a percent-encoded file:// URL (A16-4), a rewrite whose rest
                   // climbs from a base outside into the workspace (A16-5), a dashed git
                   // program (A16-2), `--shallow-file`'s value (A16-3).
                   "[remote \"pq\"]\n\turl = file://" + box.ws("p%64P") + "\n" +
                   "[url \"/usr/\"]\n\tinsteadOf = zz:\n[remote \"rw\"]\n\turl = zz:.." +
                   box.ws("pdQ") + "\n" +
                   "[alias]\n\tk = !git-push pdN HEAD\n\tl = !git --shallow-file x push pdO HEAD\n"
                   "[remote \"origin\"]\n\turl = https://example.invalid/r\n"
                   "[remote \"pdH\"]\n\tfetch = +refs/heads/*:refs/remotes/pdH/*\n"
                   "[branch \"main\"]\n\tremote = pdA\n[remote]\n\tpushDefault = pdB\n"
                   "[branch \"x\"]\n\tpushRemote = pdC\n"
                   "[includeIf \"onbranch:other\"]\n\tpath = other.cfg\n"
                   "[alias]\n\ta = push -qo opt pdD HEAD:refs/heads/x\n"
                   "\tb = push --push-opt opt pdE HEAD\n"
                   "\tc = push --recurse-submodules check pdF HEAD\n\td = push --rep=pdG\n"
                   "\te = push pdH HEAD\n\tf = !git remote add y pdI && git push y HEAD\n"
                   "\tg = push pdJ HEAD\n\th = push origin main\n\tpp = push -q\n"
                   "\ti = pp pdM HEAD\n\tj = push legacy HEAD\n");
    box.make_dir(box.ws(".git/remotes"));
    box.write_file(box.ws(".git/remotes/legacy"), "URL: pdL\n");
    const RunResult r = box.sh(
        "for r in pdA pdB pdC pdD pdE pdF pdG pdH pdI pdJ pdL pdM pdN pdO pdP pdQ; do git init "
        "-q --bare $r 2>/dev/null; done; git init -q pdS 2>/dev/null; "
        "test -e origin && echo seen > origin-seen; true");
    BOOST_TEST(r.completed(), r.describe());
    for (const char* name : {"pdA", "pdB", "pdC", "pdD", "pdE", "pdF", "pdG", "pdH", "pdI", "pdJ",
                             "pdL", "pdM", "pdN", "pdO", "pdP", "pdQ", "pdS/.git"})
      BOOST_TEST(!exists(box.ws(std::string(name) + "/hooks")), "made " << name << ": " << r.describe());
    BOOST_TEST(!exists(box.ws("origin-seen")), "a configured remote's name was protected");
  }
  // Round 16: positional parameters the alias sets itself (A16-1), `--bare` (A16-3), an
  // empty rewrite base (A16-5).
  for (const char* config :
       {"[alias]\n\tk = !git push ${R:-pdK} HEAD\n",
        "[alias]\n\tk = !git submodule foreach git push pdK HEAD\n",
        "[alias]\n\tk = !echo pdK | xargs git push\n",
        "[alias]\n\tk = \"!f() { git push \\\"$1\\\" HEAD; }; f pdK\"\n",
        "[alias]\n\tk = \"!sh -c 'git push \\\"$1\\\" HEAD' sh pdK\"\n",
        "[alias]\n\tk = !git --bare ls-remote pdK\n",
        "[url \"\"]\n\tinsteadOf = zz:\n[remote \"r\"]\n\turl = zz:pdK\n"}) {
    const char* alias = config;
    Sandbox box(caller);
    box.make_dir(box.ws(".git"));
    box.write_file(box.ws(".git/HEAD"), "ref: refs/heads/main\n");
    box.write_file(box.ws(".git/config"), config);
    const RunResult r = box.sh("git init -q --bare pdK 2>/dev/null; true");
    BOOST_TEST(!exists(box.ws("pdK/hooks")), alias << ": made pdK: " << r.describe());
    BOOST_TEST(r.exit_code == 2, alias << ": " << r.describe());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy::tests::kernel
