// The plan schema's pattern for the proxy's allow entries (docs/plan.schema.json,
// network_proxy.allow) against the grammar itself (ir::parse_destination, docs/network.md
// "Policy language"), issue 15: an executor that validates a plan by the schema must
// accept exactly the entries zpolicy can write there, each one destination with its port
// in its canonical spelling (Destination::str()).
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cctype>
#include <fstream>
#include <random>
#include <regex>

#include "ir/destination.hpp"

namespace zpolicy {
namespace {

// The pattern as the schema file holds it, JSON string escapes undone.
std::string allow_pattern() {
  std::ifstream in(std::string(ZPOLICY_SOURCE_DIR) + "/docs/plan.schema.json");
  const std::string text(std::istreambuf_iterator<char>(in), {});
  const size_t allow = text.find("\"allow\": {");
  BOOST_TEST_REQUIRE(allow != std::string::npos);
  const std::string key = "\"pattern\": \"";
  const size_t start = text.find(key, allow);
  BOOST_TEST_REQUIRE(start != std::string::npos);
  std::string out;
  for (size_t i = start + key.size(); i < text.size() && text[i] != '"'; ++i) {
    if (text[i] == '\\') ++i;  // the pattern needs only \\ and \" undone
    out += text[i];
  }
  return out;
}

// What the plan can hold: one destination in its own spelling. An IPv6 literal is held to
// the address grammar only (every lowercase spelling inet_pton reads, its port canonical), since
// spelling out inet_ntop's choice of "::" in a pattern would be unreadable; the plan writes that
// one.
bool grammar_accepts(const std::string& entry) {
  const auto parsed = ir::parse_destination(entry, nullptr);
  if (!parsed || parsed->size() != 1) return false;
  if (parsed->front().kind == ir::DestinationKind::Ipv6)
    return std::none_of(entry.begin(), entry.end(), [](char c) { return std::isupper(c); }) &&
           entry.ends_with("]:" + std::to_string(parsed->front().port));
  return parsed->front().str() == entry;
}

const std::vector<std::string> kSeeds = {
    "pypi.org:443",
    "*.pythonhosted.org:80",
    "github.com:22",
    "localhost:5432",
    "ip:192.0.2.10:443",
    "ip:[2001:db8::1]:443",
    "ip:[::ffff:192.0.2.1]:8080",
    "ip:[::]:1",
    "ip:[1:2:3:4:5:6:7:8]:65535",
    "ip:[1::2:3:4:5:6:7]:9",
    "ip:[1:2:3:4:5:6::]:9",
    "ip:[1:2:3:4:5:6:1.2.3.4]:9",
    "ip:[1::1.2.3.4]:9",
    "x_y.example:1",
    "a-b.c-d.e:99",
    "xn--bcher-kva.example:443",
    "1password.com:443",
    "127.1:80",
    "example.123:80",
    "*.com:443",
    "*:80",
    "a..b:1",
    ".a:1",
    "a.:1",
    "-a.b:1",
    "a-.b:1",
    "Pypi.org:443",
    "pypi.org",
    "pypi.org:0",
    "pypi.org:65536",
    "pypi.org:0443",
    "ip:192.0.2.010:1",
    "ip:256.0.0.1:1",
    "ip:[2001:DB8::1]:1",
    "ip:[1:2:3:4:5:6:7:8:9]:1",
    "ip:[1::2::3]:1",
    "ip:[1:2:3:4:5:6:7:1.2.3.4]:1",
    "ip:[:1]:1",
    "[::1]:80",
    "10.0.0.1:80",
    "ip:a.b:1",
    "https://pypi.org:443",
    "user@pypi.org:443",
    "pypi.org:443/x",
    "a*.b:1",
    "*.*.b:1",
    "ip:[::1]",
    "localhost",
};

}  // namespace

BOOST_AUTO_TEST_SUITE(plan_schema_allow_pattern)

BOOST_AUTO_TEST_CASE(the_pattern_accepts_exactly_what_the_grammar_accepts) {
  const std::regex pattern(allow_pattern(), std::regex::ECMAScript);
  std::vector<std::string> corpus = kSeeds;
  // Long names at the limits: 63-byte labels, 253 bytes in all, and one byte more.
  const std::string l63(63, 'a');
  corpus.push_back(l63 + ".org:1");
  corpus.push_back(l63 + "a.org:1");
  const std::string n253 = l63 + "." + l63 + "." + l63 + "." + std::string(61, 'b');
  corpus.push_back(n253 + ":1");
  corpus.push_back(n253 + "b:1");
  corpus.push_back("*." + n253.substr(2) + ":1");
  corpus.push_back("*." + n253.substr(1) + ":1");
  // Single-character edits of every seed, with a fixed seed: inserts, deletions and
  // replacements from the characters the grammar and its neighbours use.
  const std::string alphabet = "ab9_-.:*[]fA0/@1";
  std::mt19937 rng(15);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  for (const auto& seed : kSeeds)
    for (int i = 0; i < 200; ++i) {
      std::string s = seed;
      for (int e = 1 + static_cast<int>(pick(2)); e > 0; --e) {
        const size_t at = pick(s.size() + 1);
        const char c = alphabet[pick(alphabet.size())];
        switch (pick(3)) {
          case 0:
            s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), c);
            break;
          case 1:
            if (at < s.size()) s.erase(at, 1);
            break;
          default:
            if (at < s.size()) s[at] = c;
        }
      }
      corpus.push_back(s);
    }
  size_t accepted = 0;
  for (const auto& entry : corpus) {
    const bool grammar = grammar_accepts(entry);
    accepted += grammar;
    BOOST_TEST(std::regex_match(entry, pattern) == grammar,
               "'" << entry << "': the grammar " << (grammar ? "accepts" : "refuses")
                   << " it, the schema's pattern does not agree");
  }
  // Both answers must be well represented, or agreement would mean little.
  BOOST_TEST_MESSAGE(accepted << " of " << corpus.size() << " entries accepted");
  BOOST_TEST(accepted > corpus.size() / 10);
  BOOST_TEST(accepted < corpus.size() * 9 / 10);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy
