// Pathological input is refused at the first byte or event that proves it pathological:
// the location of each refusal shows that the parser stopped there instead of expanding
// aliases, recursing to the bottom of the nesting or reading the rest of the file.
#include <boost/test/unit_test.hpp>
#include <random>
#include <regex>

#include "compiler/frontend/policy_parser.hpp"
#include "compiler/frontend/yaml_tree.hpp"
#include "support/bad_policies.hpp"
#include "support/parse.hpp"
#include "support/temp_dir.hpp"

using namespace zpolicy;
using test::parse;

namespace {

void expect_refused(const std::string& text, const std::string& expected) {
  auto r = parse(text);
  BOOST_TEST(!r.policy.has_value());
  BOOST_TEST(r.errors == expected);
}

std::string nested_flow(int depth) {
  return std::string(depth, '[') + std::string(depth, ']') + "\n";
}

std::string nested_block_map(int depth) {
  std::string t;
  for (int i = 0; i < depth; ++i) t += std::string(i, ' ') + "a:\n";
  return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(frontend_limits)

BOOST_AUTO_TEST_CASE(billion_laughs_is_refused_at_the_first_anchor) {
  expect_refused(test::billion_laughs(),
                 "p.yaml:1:4: error: YAML anchors are not allowed in a policy\n");
}

BOOST_AUTO_TEST_CASE(aliases_and_anchors_anywhere_are_refused) {
  expect_refused("zpolicy: 1\nmode: &m read-only\n",
                 "p.yaml:2:7: error: YAML anchors are not allowed in a policy\n");
  expect_refused("zpolicy: 1\nmode: workspace-write\nfilesystem: &fs {deny: [/a]}\n",
                 "p.yaml:3:13: error: YAML anchors are not allowed in a policy\n");
  expect_refused("zpolicy: 1\nmode: *m\n",
                 "p.yaml:2:7: error: YAML syntax error: the referenced anchor is not defined\n");
}

BOOST_AUTO_TEST_CASE(ten_thousand_deep_flow_nesting_stops_at_level_33) {
  expect_refused(nested_flow(10000), "p.yaml:1:33: error: nesting deeper than 32 levels\n");
  // Unclosed, yaml-cpp's marks lag behind its look-ahead; the refusal is still on the
  // first line, long before the end of the input.
  auto unclosed = parse(std::string(10000, '[') + "\n");
  BOOST_TEST(!unclosed.policy.has_value());
  BOOST_TEST(
      std::regex_match(unclosed.errors,
                       std::regex("p\\.yaml:1:[0-9]{1,2}: error: nesting deeper than 32 levels\n")),
      unclosed.errors);
  std::string maps;
  for (int i = 0; i < 5000; ++i) maps += "{a: ";
  expect_refused(maps + "1" + std::string(5000, '}'),
                 "p.yaml:1:129: error: nesting deeper than 32 levels\n");
}

BOOST_AUTO_TEST_CASE(deep_block_mapping_stops_at_level_33) {
  expect_refused(nested_block_map(1400), "p.yaml:33:33: error: nesting deeper than 32 levels\n");
}

BOOST_AUTO_TEST_CASE(nesting_limit_is_exactly_32_levels) {
  ir::Diagnostics ok;
  BOOST_TEST(compiler::parse_yaml(nested_flow(32), "p.yaml", ok) != nullptr);
  BOOST_TEST(ok.str() == "");
  ir::Diagnostics refused;
  BOOST_TEST(compiler::parse_yaml(nested_flow(33), "p.yaml", refused) == nullptr);
  BOOST_TEST(refused.str() == "p.yaml:1:33: error: nesting deeper than 32 levels\n");
}

BOOST_AUTO_TEST_CASE(node_count_limit) {
  std::string many = "a: [";
  for (int i = 0; i < 100500; ++i) many += i ? ",1" : "1";
  many += "]\n";
  expect_refused(many, "p.yaml:1:199999: error: policy has more than 100000 nodes\n");

  compiler::YamlLimits small;
  small.max_nodes = 5;
  ir::Diagnostics at_limit;
  BOOST_TEST(compiler::parse_yaml("[1, 2, 3, 4]", "p.yaml", at_limit, small) != nullptr);
  ir::Diagnostics over;
  BOOST_TEST(compiler::parse_yaml("[1, 2, 3, 4, 5]", "p.yaml", over, small) == nullptr);
  BOOST_TEST(over.str() == "p.yaml:1:14: error: policy has more than 5 nodes\n");
}

BOOST_AUTO_TEST_CASE(size_limit_is_one_mebibyte) {
  const size_t limit = 1 << 20;
  std::string exactly = "#" + std::string(limit - 2, 'x') + "\n";
  BOOST_TEST_REQUIRE(exactly.size() == limit);
  expect_refused(exactly, "p.yaml: error: policy file is empty\n");
  expect_refused(exactly + "\n",
                 "p.yaml: error: policy file is larger than the limit of 1048576 bytes\n");
}

BOOST_AUTO_TEST_CASE(two_mebibyte_file_is_refused_by_load_policy_file) {
  test::TempDir dir;
  std::string valid_prefix = "zpolicy: 1\nmode: read-only\n";
  auto path = dir.write("big.yaml", valid_prefix + "#" + std::string(2 << 20, 'x') + "\n");
  ir::Diagnostics diags;
  BOOST_TEST(!compiler::load_policy_file(path, diags).has_value());
  BOOST_TEST(diags.str() ==
             path + ": error: policy file is larger than the limit of 1048576 bytes\n");
}

// A file that never ends: the reader stops one byte past the limit.
BOOST_AUTO_TEST_CASE(endless_file_is_read_only_up_to_the_limit) {
  ir::Diagnostics zero;
  BOOST_TEST(!compiler::load_policy_file("/dev/zero", zero).has_value());
  BOOST_TEST(zero.str() ==
             "/dev/zero: error: policy file is larger than the limit of 1048576 bytes\n");
}

BOOST_AUTO_TEST_CASE(binary_garbage) {
  expect_refused(std::string("\x7f"
                             "ELF\x02\x01\x01\x00",
                             8),
                 "p.yaml:1:1: error: control character in policy file (binary input?)\n");
  expect_refused(std::string("zpolicy: 1\nmode: read-only\n\x1b[31m\n"),
                 "p.yaml:3:1: error: control character in policy file (binary input?)\n");
  std::mt19937 rng(20261202);
  for (int round = 0; round < 50; ++round) {
    std::string junk(1 + rng() % 4096, '\0');
    for (auto& c : junk) c = static_cast<char>(rng());
    auto r = parse(junk);
    BOOST_TEST(!r.policy.has_value());
    BOOST_TEST(std::count(r.errors.begin(), r.errors.end(), '\n') == 1, r.errors);
  }
}

// Printable junk gets past the byte screen into the YAML parser and the schema: whatever
// it produces, every diagnostic has the located one-line shape and no policy comes out.
BOOST_AUTO_TEST_CASE(printable_junk_always_gives_well_formed_diagnostics) {
  const std::string alphabet = "zpolicy:mode-_ []{}\"'\n#,&*!|>?%@`~$/\\.0123456789abc\t";
  const std::regex shape(R"(p\.yaml(:[0-9]+:[0-9]+)?: error: [^\n]+)");
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::string junk(1 + rng() % 200, ' ');
    for (auto& c : junk) c = alphabet[rng() % alphabet.size()];
    auto r = parse(junk);
    BOOST_TEST(!r.policy.has_value(), junk);
    BOOST_TEST(!r.errors.empty(), junk);
    std::istringstream lines(r.errors);
    for (std::string line; std::getline(lines, line);)
      BOOST_TEST(std::regex_match(line, shape), line);
  }
}

BOOST_AUTO_TEST_CASE(invalid_utf8) {
  const std::string head = "zpolicy: 1\nmode: \"";
  const char* bad[] = {
      "\xc3\x28",          // lead byte without its continuation
      "\x80",              // lone continuation byte
      "\xc0\xaf",          // overlong '/'
      "\xe0\x80\xaf",      // overlong '/', three bytes
      "\xf0\x80\x80\xaf",  // overlong '/', four bytes
      "\xed\xa0\x80",      // UTF-16 surrogate U+D800
      "\xf4\x90\x80\x80",  // above U+10FFFF
      "\xf5\x80\x80\x80",  // lead byte that never occurs
      "\xff",
  };
  for (const char* b : bad)
    expect_refused(head + b + "\"\n", "p.yaml:2:8: error: policy file is not valid UTF-8\n");
  expect_refused(head + "\xe2\x82", "p.yaml:2:8: error: policy file is not valid UTF-8\n");
}

BOOST_AUTO_TEST_CASE(valid_utf8_is_accepted_and_columns_count_bytes) {
  auto ok = parse(
      "\xef\xbb\xbf# caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\nzpolicy: 1\nmode: "
      "read-only\n");
  BOOST_TEST(ok.errors == "");
  BOOST_TEST(ok.policy.has_value());
  // "/é" is five bytes, so `rel` starts at byte column 17 (code point column 16).
  expect_refused(
      "zpolicy: 1\nmode: workspace-write\nfilesystem:\n  deny: [\"/\xc3\xa9\", rel]\n",
      "p.yaml:4:17: error: in 'deny': relative path 'rel'; an absolute path or a variable "
      "is required\n");
  expect_refused("# \xc3\xa9\x01\n",
                 "p.yaml:1:5: error: control character in policy file (binary input?)\n");
}

BOOST_AUTO_TEST_CASE(nul_byte) {
  expect_refused(std::string("zpolicy: 1\nmode: read-only\0\n", 28),
                 "p.yaml:2:16: error: NUL byte in policy file\n");
}

BOOST_AUTO_TEST_CASE(yaml_tags_are_refused) {
  expect_refused("zpolicy: 1\nmode: workspace-write\nx: !!python/object:os.system [ls]\n",
                 "p.yaml:3:4: error: YAML tags are not allowed "
                 "('tag:yaml.org,2002:python/object:os.system')\n");
  expect_refused("zpolicy: !!python/object/apply:os.system [\"id\"]\n",
                 "p.yaml:1:10: error: YAML tags are not allowed "
                 "('tag:yaml.org,2002:python/object/apply:os.system')\n");
  expect_refused("zpolicy: !!int 1\nmode: read-only\n",
                 "p.yaml:1:10: error: YAML tags are not allowed ('tag:yaml.org,2002:int')\n");
  expect_refused("zpolicy: 1\nmode: !custom read-only\n",
                 "p.yaml:2:7: error: YAML tags are not allowed ('!custom')\n");
}

BOOST_AUTO_TEST_CASE(empty_and_multi_document_files) {
  expect_refused("", "p.yaml: error: policy file is empty\n");
  expect_refused("# nothing but a comment\n\n   \n", "p.yaml: error: policy file is empty\n");
  expect_refused("zpolicy: 1\nmode: read-only\n---\nzpolicy: 1\nmode: danger-full-access\n",
                 "p.yaml: error: policy file holds more than one YAML document\n");
}

BOOST_AUTO_TEST_SUITE_END()
