#include "compiler/analyzer/path_table.hpp"

#include <boost/test/unit_test.hpp>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/analyzer/path_text.hpp"

using namespace zpolicy::compiler;

namespace {

SymbolicPath P(const char* s) { return *SymbolicPath::parse(s); }

// Paths over a small alphabet, so that keys, probes and their prefixes collide often:
// names that share a prefix ("a" vs "ab"), symbolic roots, "/" itself.
SymbolicPath random_path(std::mt19937& rng) {
  static const char* const kAnchors[] = {"", "", "", "${HOME}", "${WORKSPACE}"};
  static const char* const kNames[] = {"a", "ab", "b", ".git", ".github", "a.b"};
  SymbolicPath p;
  p.anchor = kAnchors[rng() % 5];
  for (unsigned n = rng() % 5; n > 0; --n) p.components.emplace_back(kNames[rng() % 6]);
  return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(path_table)

BOOST_AUTO_TEST_CASE(finds_the_deepest_containing_key) {
  PathTable t;
  PathMap<int> index(t);
  auto id = [&](const char* s) { return t.intern(P(s)); };
  index.insert(id("/"), 0);
  index.insert(id("/a"), 1);
  index.insert(id("/a/b/c"), 2);
  index.insert(id("${HOME}"), 3);
  index.insert(id("/a"), 9);  // the first value stays
  BOOST_TEST(*index.deepest_containing(id("/a/b/c/d")) == 2);
  BOOST_TEST(*index.deepest_containing(id("/a/b")) == 1);
  BOOST_TEST(*index.deepest_containing(id("/ab")) == 0);  // a name prefix is no ancestor
  BOOST_TEST(*index.deepest_containing(id("${HOME}/x")) == 3);
  BOOST_TEST(*index.deepest_containing(id("${WORKSPACE}/x")) == 0);  // "/" holds it
  index.erase(id("/a/b/c"));
  BOOST_TEST(*index.deepest_containing(id("/a/b/c")) == 1);
  BOOST_TEST(index.find(id("/a/b")) == nullptr);
}

BOOST_AUTO_TEST_CASE(interned_paths_keep_their_text_parent_and_name) {
  PathTable t;
  const auto a = t.intern(P("${HOME}/x/y"));
  BOOST_TEST(t.intern(P("${HOME}/x/y")) == a);
  BOOST_TEST(t.path(a).str() == "${HOME}/x/y");
  BOOST_TEST(t.name(a) == "y");
  BOOST_TEST(t.path(*t.parent(a)).str() == "${HOME}/x");
  BOOST_TEST(!t.parent(t.intern(P("${HOME}"))).has_value());  // its place is unknown
  BOOST_TEST(t.up(t.intern(P("${HOME}"))) == PathTable::kRoot);
  BOOST_TEST(!t.parent(PathTable::kRoot).has_value());
  BOOST_TEST(t.child(t.intern(P("/mnt")), "${HOME}") != t.intern(P("${HOME}")));
}

// Against the definitions in SymbolicPath: contains, parent and rebase.
BOOST_AUTO_TEST_CASE(agrees_with_symbolic_path) {
  std::mt19937 rng(20261203);
  PathTable t;
  for (int round = 0; round < 3000; ++round) {
    const SymbolicPath a = random_path(rng), b = random_path(rng);
    const auto ia = t.intern(a), ib = t.intern(b);
    BOOST_TEST(t.contains(ia, ib) == a.contains(b), a.str() + " " + b.str());
    BOOST_TEST(t.less(ia, ib) == (a < b), a.str() + " " + b.str());
    BOOST_TEST(t.parent(ib).has_value() == b.parent().has_value(), b.str());
    if (b.parent()) BOOST_TEST((t.path(*t.parent(ib)) == *b.parent()), b.str());
    if (a.contains(b)) {
      const SymbolicPath to = random_path(rng);
      const SymbolicPath want = to.rebase(a, b);
      BOOST_TEST((t.path(t.rebase(t.intern(to), ia, ib)) == want),
                 to.str() + " " + a.str() + " " + b.str());
    }
  }
}

// Against the definition: a key contains a path when SymbolicPath::contains says so.
// fold_down(), asked in random order so that its memo is met at every depth, counts
// the keys at or above a path as a scan does.
BOOST_AUTO_TEST_CASE(agrees_with_a_scan_of_every_key) {
  std::mt19937 rng(20261202);
  for (int round = 0; round < 200; ++round) {
    PathTable t;
    PathMap<size_t> index(t), counts(t);
    std::vector<SymbolicPath> keys;
    for (int k = 0; k < 12; ++k) {
      SymbolicPath p = random_path(rng);
      if (index.find(t.intern(p))) continue;
      index.insert(t.intern(p), keys.size());
      keys.push_back(p);
    }
    for (int q = 0; q < 30; ++q) {
      const SymbolicPath p = random_path(rng);
      std::vector<size_t> want;  // deepest first
      for (size_t k = 0; k < keys.size(); ++k)
        if (keys[k].contains(p)) want.push_back(k);
      auto depth = [&](size_t k) { return keys[k].components.size() + !keys[k].anchor.empty(); };
      std::sort(want.begin(), want.end(), [&](size_t x, size_t y) { return depth(x) > depth(y); });
      const size_t count = fold_down(t, counts, t.intern(p), size_t{0}, [&](auto a, size_t above) {
        return above + (index.find(a) ? 1 : 0);
      });
      BOOST_TEST(count == want.size(), p.str());
      const size_t* deepest = index.deepest_containing(t.intern(p));
      BOOST_TEST((deepest != nullptr) == !want.empty(), p.str());
      if (deepest && !want.empty()) BOOST_TEST(*deepest == want.front(), p.str());
    }
  }
}

// Enough paths to grow the children index many times over: every path keeps its id,
// and names handed out before the growth still read the same.
BOOST_AUTO_TEST_CASE(ids_and_names_survive_growth) {
  PathTable t;
  std::vector<std::pair<PathTable::Id, std::string_view>> seen;
  for (int i = 0; i < 5000; ++i) {
    const std::string name = "n" + std::to_string(i) + std::string(i % 40, 'x');
    const PathTable::Id dir = seen.empty() ? PathTable::kRoot : seen[i / 7].first;
    const PathTable::Id id = t.child(dir, name);
    BOOST_TEST_REQUIRE(t.child(dir, name) == id);
    BOOST_TEST_REQUIRE(t.up(id) == dir);
    seen.emplace_back(id, t.name(id));
  }
  for (int i = 0; i < 5000; ++i) {
    const std::string name = "n" + std::to_string(i) + std::string(i % 40, 'x');
    BOOST_TEST_REQUIRE(seen[i].second == name);
    BOOST_TEST_REQUIRE(t.name(seen[i].first) == name);
    const PathTable::Id dir = i == 0 ? PathTable::kRoot : seen[i / 7].first;
    BOOST_TEST_REQUIRE(t.child(dir, name) == seen[i].first);
  }
  // The same name below different directories is different paths.
  BOOST_TEST(t.child(seen[1].first, "same") != t.child(seen[2].first, "same"));
}

// PathTable::parse reads text as SymbolicPath::parse does: the same texts refused, the
// same path interned for the others.
// A '$' is a character of a host name; only a name starting with "${" is refused, since
// once rebased it could not be told from an anchor (red team H17-10: a workspace below
// `w$s` was refused on every run).
BOOST_AUTO_TEST_CASE(a_dollar_in_a_name_is_a_character_and_only_an_anchor_starts_with_it) {
  for (const char* ok : {"/w$s/a$b", "/$HOME/x", "/x/a${HOME}", "/x/$", "${HOME}/a$b"}) {
    const auto p = SymbolicPath::parse(ok);
    BOOST_TEST_REQUIRE(p.has_value(), ok);
    BOOST_TEST(p->str() == ok);
    BOOST_TEST(p->anchor.empty() == (ok[0] == '/'), ok);
  }
  // A root's name is a variable's: "${A/../etc}" is a host path to bwrap (dollar17).
  for (const char* refused : {"/x/${HOME}", "/x/${HOME}/y", "${HOME}/${TMPDIR}", "/${}",
                              "${A/../etc/shadow}", "${..}", "${A B}/x", "${$}"})
    BOOST_TEST(!SymbolicPath::parse(refused).has_value(), refused);
}

// In a bound artifact every path is a host path and every name a name: `${HOME}` below
// "/" or anywhere else is a directory, and a path that starts with it is relative, which
// bwrap would resolve against its working directory (red team H17-10, Z19-3).
BOOST_AUTO_TEST_CASE(a_bound_path_reads_a_name_spelled_like_a_variable_as_a_name) {
  for (const char* ok : {"/x/${HOME}", "/${HOME}/y", "/w/${WORKSPACE}/.git", "/${}", "/a/${",
                         "/${project.basedir}/.env", "/a/}/$"}) {
    const auto p = SymbolicPath::parse(ok, PathSpelling::Bound);
    BOOST_TEST_REQUIRE(p.has_value(), ok);
    BOOST_TEST(p->anchor.empty(), ok);
    BOOST_TEST(p->str() == ok);
  }
  // "${A/../etc}" is three names to bwrap, one of them "..", refused as in any path.
  for (const char* refused : {"${HOME}", "${HOME}/x", "${WORKSPACE}/.git", "x/${HOME}", "",
                              "/a/../b", "/a\nb", "/${A/../etc/shadow}"})
    BOOST_TEST(!SymbolicPath::parse(refused, PathSpelling::Bound).has_value(), refused);

  PathTable t(PathSpelling::Bound);
  const PathTable::Id dir = *t.parse("/${HOME}");
  BOOST_TEST((t.parent(dir) == std::optional<PathTable::Id>(PathTable::kRoot)));
  BOOST_TEST(t.path(*t.parse("/${HOME}/x")).str() == "/${HOME}/x");
  BOOST_TEST(t.contains(dir, *t.parse("/${HOME}/x")));
  // Rebased onto "/", a name stays a name.
  const PathTable::Id mnt = *t.parse("/mnt"), below = *t.parse("/mnt/${HOME}/x");
  const PathTable::Id back = t.rebase(PathTable::kRoot, mnt, below);
  BOOST_TEST(back == *t.parse("/${HOME}/x"));
  BOOST_TEST((t.parent(t.up(back)) == std::optional<PathTable::Id>(PathTable::kRoot)));
  // A link's relative target `${HOME}/y` is below the link's directory.
  BOOST_TEST(t.path(*t.link_destination(*t.parse("/a/l"), "${HOME}/y")).str() == "/a/${HOME}/y");
  // The portable reading of the same texts: a root, refused below the first name.
  PathTable p;
  BOOST_TEST(!p.parent(*p.parse("${HOME}")).has_value());
  BOOST_TEST(!p.parse("/${HOME}").has_value());
}

BOOST_AUTO_TEST_CASE(parse_agrees_with_symbolic_path_parse) {
  static const char* const kPieces[] = {"/",  "//", "a",  "ab", ".",   "..",  "${HOME}", "${",
                                        "}",  "$",  "\n", "\r", ".git", "x.y", "/.", "${}"};
  for (const PathSpelling spelling : {PathSpelling::Portable, PathSpelling::Bound}) {
    std::mt19937 rng(20261204);
    PathTable t(spelling);
    for (int round = 0; round < 20000; ++round) {
      std::string text;
      for (unsigned n = rng() % 6; n > 0; --n) text += kPieces[rng() % 16];
      if (rng() % 7 == 0) text += std::string(1, '\0');
      const auto want = SymbolicPath::parse(text, spelling);
      const auto got = t.parse(text);
      BOOST_TEST_REQUIRE(got.has_value() == want.has_value(), text);
      if (want) BOOST_TEST_REQUIRE((*got == t.intern(*want) && t.path(*got) == *want), text);
    }
  }
}

// parse() starts where a text parts from the one before it; texts that share prefixes of
// every length with their predecessor read as if each came alone.
BOOST_AUTO_TEST_CASE(parse_after_a_shared_prefix_agrees_with_symbolic_path_parse) {
  static const char* const kPieces[] = {"/", "//", "a",  "ab", ".",    "..",   "${HOME}", "${",
                                        "}", "$",  "\n", "/a", ".git", "/x.y", "/.",      "${}"};
  std::mt19937 rng(20261203);
  PathTable t;
  std::string previous = "/a/ab/x.y";
  for (int round = 0; round < 20000; ++round) {
    std::string text = previous.substr(0, rng() % (previous.size() + 1));
    for (unsigned n = rng() % 4; n > 0; --n) text += kPieces[rng() % 16];
    const auto want = SymbolicPath::parse(text);
    const auto got = t.parse(text);
    BOOST_TEST_REQUIRE(got.has_value() == want.has_value(), text);
    if (want) BOOST_TEST_REQUIRE((*got == t.intern(*want) && t.path(*got) == *want), text);
    if (rng() % 3 != 0) previous = text;
  }
}

// The text relations (path_text.hpp) read paths as SymbolicPath does: "/" holds every
// absolute and symbolic path, a symbolic root's parent is unknown, and a root is re-rooted
// with the components below it.
BOOST_AUTO_TEST_CASE(text_relations_agree_with_symbolic_path) {
  std::mt19937 rng(18);
  for (int i = 0; i < 20000; ++i) {
    const SymbolicPath a = random_path(rng), b = random_path(rng);
    const std::string text = a.str();
    BOOST_TEST(within(text, b.str()) == a.contains(b), text << " holds " << b.str());
    const auto parent = parent_of(text);
    BOOST_TEST(parent.has_value() == a.parent().has_value(), a.str());
    if (parent && a.parent()) BOOST_TEST(*parent == a.parent()->str());
    if (!a.anchor.empty() && a.components.empty() && a.contains(b)) {  // a bare root
      const SymbolicPath place = P("/Users/zp-bind");
      BOOST_TEST(rebased(b.str(), a.str(), place.str()) == place.rebase(a, b).str());
    }
    if (!a.contains(b)) BOOST_TEST(rebased(b.str(), a.str(), "/x") == b.str());
  }
}

BOOST_AUTO_TEST_CASE(text_relations_at_the_edges) {
  BOOST_TEST(within("/", "/"));
  BOOST_TEST(within("/", "${HOME}/a"));
  BOOST_TEST(!within("/", "127.0.0.1:80"));  // no path: an address, a sysctl name
  BOOST_TEST(!within("/a", "/ab"));
  BOOST_TEST(!within("${HOME}", "${HOMER}/a"));
  BOOST_TEST(within("${HOME}", "${HOME}/a"));
  BOOST_TEST(!within("/a/b", "/a"));
  // Relative paths below a place walk up to their first name.
  BOOST_TEST(*parent_of("a/b/c") == "a/b");
  BOOST_TEST(!parent_of("a").has_value());
  BOOST_TEST(*parent_of("/a") == "/");
  BOOST_TEST(!parent_of("/").has_value());
  BOOST_TEST(!parent_of("${HOME}").has_value());
  BOOST_TEST(rebased("${HOME}/.ssh", "${HOME}", "/Users/u") == "/Users/u/.ssh");
  BOOST_TEST(rebased("${HOMER}/.ssh", "${HOME}", "/Users/u") == "${HOMER}/.ssh");
}

BOOST_AUTO_TEST_SUITE_END()
