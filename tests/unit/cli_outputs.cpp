// What zpolicy writes and prints is never a way in: `compile --out` writes no file
// through a link planted in DIR and leaves either the whole new set or the old one;
// JSON and SARIF output stay UTF-8 and well-formed whatever bytes the policy's file name
// holds; `inspect` refuses numbers that would be cut to another call.
#include <boost/test/unit_test.hpp>
#include <sys/stat.h>

#include <filesystem>

#include "support/cli.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"
#include "zpolicy/version.hpp"

using namespace zpolicy;
namespace fs = std::filesystem;

namespace {

using test::Cli;

const std::vector<std::string> kLinuxArtifacts = {"bwrap.args", "seccomp.bpf", "seccomp.txt"};

// Whether `s` is well-formed UTF-8 (an independent check of the CLI's encoder).
bool utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    i += n;
  }
  return true;
}

// The built-in default policy, written as p.yaml in the CLI's directory.
void write_policy(const Cli& cli) {
  auto r = cli.run({"show-default"});
  BOOST_REQUIRE(r.exit_code == 0);
  cli.dir.write("p.yaml", r.out);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_outputs)

BOOST_AUTO_TEST_CASE(an_artifact_name_that_is_a_link_is_refused_and_its_target_unchanged) {
  for (const auto& name : kLinuxArtifacts) {
    for (const std::string tmp : {"", ".tmp"}) {
      Cli cli;
      write_policy(cli);
      cli.dir.write("victim", "victim\n");
      cli.dir.mkdir("out");
      cli.dir.symlink("../victim", "out/" + name + tmp);
      auto r = cli.run({"compile", "p.yaml", "--target", "linux", "--out", "out"});
      BOOST_TEST_CONTEXT(name + tmp) {
        BOOST_TEST(test::slurp(cli.dir / "victim") == "victim\n");
        if (tmp.empty()) {
          BOOST_TEST(r.exit_code == 125);
          BOOST_TEST(r.err.find("refusing to write through it") != std::string::npos, r.err);
          // Nothing of the new set was written next to the link.
          BOOST_TEST(cli.listing("out") == std::vector<std::string>{name});
        } else {
          // A link with another name is not in the way: the set is written beside it.
          BOOST_TEST(r.exit_code == 0, r.err);
          BOOST_TEST(fs::is_symlink(cli.dir / ("out/" + name + tmp)));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_directory_or_fifo_in_the_way_leaves_the_old_set_whole) {
  for (const auto& name : kLinuxArtifacts) {
    for (bool fifo : {false, true}) {
      Cli cli;
      write_policy(cli);
      cli.dir.mkdir("out");
      for (const auto& a : kLinuxArtifacts) cli.dir.write("out/" + a, "old " + a);
      fs::remove(cli.dir / ("out/" + name));
      if (fifo)
        BOOST_REQUIRE(mkfifo((cli.dir / ("out/" + name)).c_str(), 0644) == 0);
      else
        cli.dir.mkdir("out/" + name);
      auto r = cli.run({"compile", "p.yaml", "--target", "linux", "--out", "out"});
      BOOST_TEST_CONTEXT(name << (fifo ? " as a fifo" : " as a directory")) {
        BOOST_TEST(r.exit_code == 125);
        BOOST_TEST(cli.listing("out") == kLinuxArtifacts);
        for (const auto& a : kLinuxArtifacts)
          if (a != name) BOOST_TEST(test::slurp(cli.dir / ("out/" + a)) == "old " + a);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(an_artifact_name_hard_linked_to_a_victim_is_replaced_not_written_through) {
  for (const auto& name : kLinuxArtifacts) {
    Cli cli;
    write_policy(cli);
    cli.dir.write("victim", "victim\n");
    cli.dir.mkdir("out");
    fs::create_hard_link(cli.dir / "victim", cli.dir / ("out/" + name));
    auto r = cli.run({"compile", "p.yaml", "--target", "linux", "--out", "out"});
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(r.exit_code == 0, r.err);
      BOOST_TEST(test::slurp(cli.dir / "victim") == "victim\n");
      BOOST_TEST(fs::hard_link_count(cli.dir / "victim") == 1u);
      BOOST_TEST(cli.listing("out") == kLinuxArtifacts);
    }
  }
}

BOOST_AUTO_TEST_CASE(out_dir_that_is_a_symlink_is_refused) {
  Cli cli;
  write_policy(cli);
  cli.dir.mkdir("elsewhere");
  cli.dir.symlink("elsewhere", "out");
  auto r = cli.run({"compile", "p.yaml", "--target", "linux", "--out", "out"});
  BOOST_TEST(r.exit_code == 125);
  BOOST_TEST(r.err == "zpolicy: 'out' is a symlink; give the directory it points to\n");
  BOOST_TEST(cli.listing("elsewhere").empty());
}

BOOST_AUTO_TEST_CASE(an_existing_set_is_replaced_whole_and_no_staging_is_left) {
  Cli cli;
  write_policy(cli);
  cli.dir.mkdir("out");
  for (const auto& a : kLinuxArtifacts) cli.dir.write("out/" + a, "old");
  cli.dir.write("out/README", "kept");
  auto r = cli.run({"compile", "p.yaml", "--target", "linux", "--out", "out"});
  BOOST_TEST(r.exit_code == 0, r.err);
  auto want = kLinuxArtifacts;
  want.insert(want.begin(), "README");
  BOOST_TEST(cli.listing("out") == want);
  auto emitted = cli.run({"compile", "p.yaml", "--target", "linux", "--emit", "bwrap.args"});
  BOOST_TEST(test::slurp(cli.dir / "out/bwrap.args") == emitted.out);
  BOOST_TEST(test::slurp(cli.dir / "out/README") == "kept");
}

BOOST_AUTO_TEST_CASE(json_and_sarif_stay_utf8_whatever_the_file_name_holds) {
  Cli cli;
  // A lint (ZP010) so that the output names the file; the name holds a byte that is not
  // UTF-8, a space and a percent sign.
  const std::string name = "p\xff %x.yaml";
  cli.dir.write(name, "zpolicy: 1\nmode: danger-full-access\n");
  auto json = cli.run({"check", name, "--format", "json"});
  BOOST_TEST(utf8(json.out), json.out);
  BOOST_TEST(json.out.find("\"file\": \"p\\ufffd %x.yaml\"") != std::string::npos, json.out);
  auto sarif = cli.run({"check", name, "--format", "sarif"});
  BOOST_TEST(utf8(sarif.out), sarif.out);
  BOOST_TEST(sarif.out.find("\"uri\": \"p%FF%20%25x.yaml\"") != std::string::npos, sarif.out);

  // Both documents as a strict reader sees them: bytes decoded as UTF-8 with errors
  // refused, then parsed; the name is U+FFFD in JSON text and %FF in the SARIF URI.
  cli.dir.write("check.json", json.out);
  cli.dir.write("check.sarif", sarif.out);
  auto parsed = test::run_process(
      {"/usr/bin/python3", "-c",
       "import json,sys\n"
       "def load(p): return json.loads(open(p,'rb').read().decode('utf-8','strict'))\n"
       "j=load(sys.argv[1])\n"
       "s=load(sys.argv[2])['runs'][0]\n"
       "print(ascii(j['findings'][0]['file']))\n"
       "print(s['results'][0]['locations'][0]['physicalLocation']['artifactLocation']['uri'])\n",
       (cli.dir / "check.json"), (cli.dir / "check.sarif")},
      cli.dir.str(), cli.dir.str());
  BOOST_TEST(parsed.exit_code == 0, parsed.err);
  BOOST_TEST(parsed.out == "'p\\ufffd %x.yaml'\np%FF%20%25x.yaml\n");
}

// Parses SARIF with Python's json module and prints "ruleId ruleIndex->rules[i].id
// helpUri level" per result, so the test checks structure, not substrings.
std::string sarif_summary(Cli& cli, const std::string& sarif) {
  cli.dir.write("sarif.json", sarif);
  auto r = test::run_process(
      {"/usr/bin/python3", "-c",
       "import json,sys\n"
       "run=json.load(open(sys.argv[1]))['runs'][0]\n"
       "rules=run['tool']['driver']['rules']\n"
       "home=run['tool']['driver']['informationUri']\n"
       "assert all(r['helpUri']==home+'/blob/main/docs/lints.md' and r['shortDescription']['text'] and "
       "r['fullDescription']['text'] for r in rules)\n"
       "for x in run['results']:\n"
       "  print(x['ruleId'], rules[x['ruleIndex']]['id'], rules[x['ruleIndex']]['name'], x['level'])\n",
       (cli.dir / "sarif.json")},
      cli.dir.str(), cli.dir.str());
  BOOST_TEST(r.exit_code == 0, r.err);
  return r.out;
}

BOOST_AUTO_TEST_CASE(sarif_links_come_from_the_project_address) {
  Cli cli;
  cli.dir.write("p.yaml", "zpolicy: 1\nmode: danger-full-access\n");
  auto r = cli.run({"check", "p.yaml", "--format", "sarif"});
  BOOST_TEST(r.out.find("\"informationUri\": \"" ZPOLICY_HOMEPAGE_URL "\"") != std::string::npos,
             r.out);
}

BOOST_AUTO_TEST_CASE(sarif_describes_every_rule_a_result_names) {
  Cli cli;
  cli.dir.write("p.yaml", "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  write: [\"~\"]\n");
  auto r = cli.run({"check", "p.yaml", "--format", "sarif"});
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(sarif_summary(cli, r.out) == "ZP003 ZP003 WritableHomeOrStartupFile error\n");
}

BOOST_AUTO_TEST_CASE(a_policy_that_does_not_load_is_still_a_sarif_and_json_document) {
  Cli cli;
  cli.dir.write("p.yaml", "zpolicy: 1\nmode: workspace-write\nnetwrok: none\n");
  auto sarif = cli.run({"check", "p.yaml", "--format", "sarif"});
  BOOST_TEST(sarif.exit_code == 2);
  BOOST_TEST(sarif_summary(cli, sarif.out) == "ZP000 ZP000 InvalidPolicy error\n");
  BOOST_TEST(sarif.err.find("p.yaml:3:1: error: unknown key 'netwrok'") != std::string::npos, sarif.err);
  auto json = cli.run({"check", "p.yaml", "--format", "json"});
  BOOST_TEST(json.exit_code == 2);
  BOOST_TEST(json.out.rfind("{\"findings\": [{\"id\": \"ZP000\", \"severity\": \"error\", "
                            "\"file\": \"p.yaml\", \"line\": 3, \"column\": 1", 0) == 0,
             json.out);
}

BOOST_AUTO_TEST_CASE(compile_json_carries_non_utf8_text_as_bytes) {
  Cli cli;
  write_policy(cli);
  const std::string ws = "ws\xfe";
  cli.dir.mkdir(ws);
  auto r = cli.run({"compile", "p.yaml", "--target", "linux", "--workspace", ws, "--format", "json"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(utf8(r.out));
  BOOST_TEST(r.out.find("\"bwrap.args\": {\"base64\": ") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(inspect_refuses_numbers_that_do_not_fit) {
  Cli cli;
  const std::string bpf = std::string(ZPOLICY_SOURCE_DIR) + "/golden/default.linux/seccomp.bpf";
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"--syscall", "4294967296"},
       "<command line>: error: invalid --syscall 4294967296: a system call number is 32 bits (at most "
       "4294967295)\n"},
      {{"--syscall", "18446744073709551616"},
       "<command line>: error: invalid --syscall 18446744073709551616: a system call number is 32 bits (at "
       "most 4294967295)\n"},
      {{"--syscall", "0x100000000", "--arch", "i386"},
       "<command line>: error: invalid --syscall 0x100000000: a system call number is 32 bits (at most "
       "4294967295)\n"},
      {{"--syscall", "ptrace", "--args", "18446744073709551616"},
       "<command line>: error: invalid --args '18446744073709551616' (at most 6 numbers, decimal or 0x hex, "
       "64 bits each for x86_64)\n"},
      {{"--syscall", "ptrace", "--arch", "i386", "--args", "0x100000000"},
       "<command line>: error: invalid --args '0x100000000' (at most 6 numbers, decimal or 0x hex, 32 bits "
       "each for i386)\n"},
      {{"--syscall", "ptrace", "--args", "-1"},
       "<command line>: error: invalid --args '-1' (at most 6 numbers, decimal or 0x hex, 64 bits each for "
       "x86_64)\n"},
      {{"--syscall", "ptrace", "--args", " 1"},
       "<command line>: error: invalid --args ' 1' (at most 6 numbers, decimal or 0x hex, 64 bits each for "
       "x86_64)\n"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {"inspect", bpf};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto r = cli.run(argv);
    BOOST_TEST(r.exit_code == 2, c.err);
    BOOST_TEST(r.err == c.err);
    BOOST_TEST(r.out == "");
  }
  // A leading zero is decimal, not octal: 010 is ten.
  auto ok = cli.run({"inspect", bpf, "--syscall", "ptrace", "--args", "010"});
  BOOST_TEST(ok.exit_code == 0, ok.err);
}

// An artifact a pull request adds as a symlink would have inspect print, disassembled, any
// file the reviewer can read; a FIFO would block it. Read only as compile writes them.
BOOST_AUTO_TEST_CASE(inspect_reads_only_a_regular_file) {
  Cli cli;
  cli.dir.write("victim", std::string(64, 'K'));
  cli.dir.symlink("victim", "seccomp.bpf");
  auto link = cli.run({"inspect", cli.dir / "seccomp.bpf"});
  BOOST_TEST(link.exit_code == 2);
  BOOST_TEST(link.err == "zpolicy: '" + (cli.dir / "seccomp.bpf") +
                             "' is a symlink, not the regular file compile writes; refusing to "
                             "read through it\n");
  BOOST_TEST(link.out == "");
  BOOST_REQUIRE(::mkfifo((cli.dir / "fifo.bpf").c_str(), 0600) == 0);
  auto fifo = cli.run({"inspect", cli.dir / "fifo.bpf"});
  BOOST_TEST(fifo.exit_code == 2);
  BOOST_TEST(fifo.err.find("is a special file") != std::string::npos, fifo.err);
  auto dir = cli.run({"inspect", cli.dir.str() + "/."});
  BOOST_TEST(dir.exit_code == 2);
  auto missing = cli.run({"inspect", cli.dir / "none.bpf"});
  BOOST_TEST(missing.exit_code == 2);
  BOOST_TEST(missing.err == "zpolicy: cannot read '" + (cli.dir / "none.bpf") + "': no such file\n");
  // The path's directories are followed as given.
  const std::string bpf = std::string(ZPOLICY_SOURCE_DIR) + "/golden/default.linux/seccomp.bpf";
  cli.dir.mkdir("real");
  fs::copy_file(bpf, cli.dir / "real/seccomp.bpf");
  cli.dir.symlink("real", "through");
  auto ok = cli.run({"inspect", cli.dir / "through/seccomp.bpf"});
  BOOST_TEST(ok.exit_code == 0, ok.err);
}

BOOST_AUTO_TEST_SUITE_END()
