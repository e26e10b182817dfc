// The allow-list language (ir/destination, the frontend) and the proxy's admission
// function (compiler/network/admission), tested on their own and against each other.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <random>

#include "compiler/lint/policy_lint.hpp"
#include "compiler/network/admission.hpp"
#include "support/cli.hpp"
#include "support/parse.hpp"

namespace zpolicy {
namespace {

std::string policy_with(const std::string& entries) {
  return "zpolicy: 1\nmode: workspace-write\nnetwork:\n  allow: [" + entries + "]\n";
}

std::vector<ir::Located<ir::Destination>> allow_of(const std::string& entries) {
  auto parsed = test::parse(policy_with(entries));
  BOOST_TEST_REQUIRE(parsed.errors == "");
  return parsed.policy->allow;
}

std::vector<ir::IpAddress> addrs(std::initializer_list<const char*> texts) {
  std::vector<ir::IpAddress> out;
  for (const char* t : texts) out.push_back(*ir::IpAddress::parse(t));
  return out;
}

// The kernel's routes for admit(), as a test states them: every address is another host's
// (a unicast route) but those given, which are this host's (a local route).
ir::RouteOf routes_with_local(std::initializer_list<const char*> local = {}) {
  return [own = addrs(local)](const ir::IpAddress& a) {
    if (std::find(own.begin(), own.end(), a) != own.end())
      return ir::RouteAnswer{ir::Delivery::ThisHost, "a local route"};
    return ir::RouteAnswer{ir::Delivery::Elsewhere, "a unicast route"};
  };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(network_allow)

BOOST_AUTO_TEST_CASE(entries_are_sorted_deduplicated_and_default_to_80_and_443) {
  auto parsed = test::parse(policy_with(
      "pypi.org, \"*.PythonHosted.org\", github.com:22, localhost:5432, pypi.org:443, "
      "\"ip:[2001:DB8::0:1]:443\", ip:192.0.2.7"));
  BOOST_TEST_REQUIRE(parsed.errors == "");
  std::vector<std::string> got;
  for (const auto& d : parsed.policy->allow) got.push_back(d.value.str() + "@" + d.loc.str());
  const std::vector<std::string> want = {
      "github.com:22@p.yaml:4:43",        "pypi.org:80@p.yaml:4:11",
      "pypi.org:443@p.yaml:4:11",         "*.pythonhosted.org:80@p.yaml:4:21",
      "*.pythonhosted.org:443@p.yaml:4:21", "localhost:5432@p.yaml:4:58",
      "ip:192.0.2.7:80@p.yaml:4:114",     "ip:192.0.2.7:443@p.yaml:4:114",
      "ip:[2001:db8::1]:443@p.yaml:4:88"};
  BOOST_TEST(got == want, boost::test_tools::per_element());
  BOOST_TEST(std::string(ir::to_string(parsed.policy->network.value)) == "allow");
}

BOOST_AUTO_TEST_CASE(bad_entries_are_refused_at_their_position) {
  const std::pair<const char*, const char*> cases[] = {
      {"https://pypi.org", "a scheme"},
      {"pypi.org/simple", "a path or query"},
      {"user@pypi.org", "a user part"},
      {"a..org", "empty label"},
      {".pypi.org", "empty label"},
      {"pypi.org.", "empty label"},
      {"foo*.com", "whole leading label"},
      {"a.*.com", "whole leading label"},
      {"\"*\"", "a wildcard alone"},
      {"pypi.org:0", "out of range"},
      {"pypi.org:65536", "out of range"},
      {"pypi.org:x", "a number from 1 to 65535"},
      {"10.0.0.1", "bare IP literal"},
      {"\"[2001:db8::1]:443\"", "bare IP literal"},
      {"\"2001:db8::1\"", "bare IP literal"},
      {"127.1", "looks like an IP address"},
      {"localhost", "localhost needs a port"},
      {"ip:pypi.org", "'ip:' must be followed"},
      {"\"pypi .org\"", "whitespace"},
      {"\"b\u00fccher.de\"", "non-ASCII"},
      {"a_b-.org", "start or end with '-'"},
      {"\"\"", "empty entry"},
  };
  for (const auto& [entry, why] : cases) {
    auto parsed = test::parse(policy_with(entry));
    BOOST_TEST_CONTEXT(entry) {
      BOOST_TEST(!parsed.policy);
      BOOST_TEST(parsed.errors.starts_with("p.yaml:4:11: error: in 'allow': "));
      BOOST_TEST(parsed.errors.find(why) != std::string::npos, parsed.errors);
    }
  }
  BOOST_TEST(test::parse("zpolicy: 1\nmode: workspace-write\nnetwork: {allow: []}\n")
                 .errors.find("an empty allow list admits nothing") != std::string::npos);
  BOOST_TEST(test::parse("zpolicy: 1\nmode: workspace-write\nnetwork: {deny: [a.org]}\n")
                 .errors.find("unknown key 'deny'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(lints_name_public_suffix_wildcards_and_entries_that_never_match) {
  auto ids = [](const std::string& entries) {
    auto parsed = test::parse(policy_with(entries));
    BOOST_TEST_REQUIRE(parsed.errors == "");
    std::vector<std::string> out;
    for (const auto& l : compiler::lint_policy(*parsed.policy, {})) out.push_back(l.code);
    return out;
  };
  BOOST_TEST(ids("\"*.com\"") == std::vector<std::string>{"ZP014"});
  BOOST_TEST(ids("\"*.co.uk\"") == std::vector<std::string>{"ZP014"});
  BOOST_TEST(ids("\"*.github.io\"") == std::vector<std::string>{"ZP014"});
  BOOST_TEST(ids("\"*.example.co.uk\", \"*.pythonhosted.org\"").empty());
  BOOST_TEST(ids("ip:10.1.2.3:443") == std::vector<std::string>{"ZP015"});
  BOOST_TEST(ids("ip:169.254.169.254:80") == std::vector<std::string>{"ZP015"});
  BOOST_TEST(ids("db.localhost:5432") == std::vector<std::string>{"ZP015"});
  BOOST_TEST(ids("ip:192.0.2.1:443").empty());
}

BOOST_AUTO_TEST_CASE(address_scopes) {
  const std::pair<const char*, ir::AddressScope> cases[] = {
      {"8.8.8.8", ir::AddressScope::Public},
      {"198.51.100.7", ir::AddressScope::Public},
      {"2606:4700::1111", ir::AddressScope::Public},
      {"127.0.0.1", ir::AddressScope::Loopback},
      {"127.255.0.9", ir::AddressScope::Loopback},
      {"::1", ir::AddressScope::Loopback},
      {"10.0.0.1", ir::AddressScope::Private},
      {"172.16.0.1", ir::AddressScope::Private},
      {"172.31.255.255", ir::AddressScope::Private},
      {"172.32.0.1", ir::AddressScope::Public},
      {"192.168.1.1", ir::AddressScope::Private},
      {"100.64.0.1", ir::AddressScope::Private},
      {"fd00::1", ir::AddressScope::Private},
      {"fc00::1", ir::AddressScope::Private},
      {"169.254.169.254", ir::AddressScope::LinkLocal},
      {"fe80::1", ir::AddressScope::LinkLocal},
      {"224.0.0.1", ir::AddressScope::Multicast},
      {"ff02::1", ir::AddressScope::Multicast},
      {"0.0.0.0", ir::AddressScope::Unspecified},
      {"::", ir::AddressScope::Unspecified},
      {"255.255.255.255", ir::AddressScope::Reserved},
      {"::ffff:8.8.8.8", ir::AddressScope::Ipv4Mapped},
      {"::ffff:127.0.0.1", ir::AddressScope::Ipv4Mapped},
      {"64:ff9b::a9fe:a9fe", ir::AddressScope::Translated},
      {"64:ff9b::808:808", ir::AddressScope::Public},
      {"64:ff9b:1::a00:1", ir::AddressScope::Private},
      {"64:ff9b:1:808:8:800::", ir::AddressScope::Private},
      {"2002:a9fe:a9fe::1", ir::AddressScope::Translated},
      {"2002:7f00:1::", ir::AddressScope::Translated},
      {"2002:c0a8:101::1", ir::AddressScope::Translated},
      {"2002:808:808::1", ir::AddressScope::Public},
      // Red team A13B-2: the other forms that carry an IPv4 address.
      {"::ffff:0:7f00:1", ir::AddressScope::Translated},
      {"::ffff:0:a9fe:a9fe", ir::AddressScope::Translated},
      {"::ffff:0:808:808", ir::AddressScope::Public},
      {"2001:0:4136:e378:8000:63bf:80ff:fffe", ir::AddressScope::Translated},  // to 127.0.0.1
      {"2001:0:4136:e378:8000:63bf:f5ff:fffe", ir::AddressScope::Translated},  // to 10.0.0.1
      {"2001:0:a00:1:8000:63bf:3fff:fdd2", ir::AddressScope::Translated},      // server 10.0.0.1
      {"2001:0:4136:e378:8000:63bf:3fff:fdd2", ir::AddressScope::Public},
      {"2001:db8::5efe:a9fe:a9fe", ir::AddressScope::Translated},
      {"2001:db8::200:5efe:c0a8:101", ir::AddressScope::Translated},
      {"2001:db8::5efe:808:808", ir::AddressScope::Public},
      {"fe80::5efe:808:808", ir::AddressScope::LinkLocal},
      {"2001:4860::1", ir::AddressScope::Public},
  };
  for (const auto& [text, scope] : cases)
    BOOST_TEST_CONTEXT(text) {
      BOOST_TEST(std::string(ir::to_string(ir::scope_of(*ir::IpAddress::parse(text)))) ==
                 ir::to_string(scope));
    }
}

BOOST_AUTO_TEST_CASE(admission_refuses_what_is_not_listed_and_every_non_public_address) {
  const auto allow =
      allow_of("pypi.org, \"*.pythonhosted.org\", github.com:22, localhost:5432, ip:192.0.2.7:443");
  const auto pub = addrs({"151.101.0.223"});
  auto verdict = [&](std::string_view host, uint16_t port, const std::vector<ir::IpAddress>& a) {
    auto r = compiler::admit(allow, host, port, a, routes_with_local());
    return r.admitted ? std::string("admitted") : std::string(compiler::to_string(*r.refusal));
  };
  BOOST_TEST(verdict("pypi.org", 443, pub) == "admitted");
  BOOST_TEST(verdict("PyPI.org.", 80, pub) == "admitted");
  BOOST_TEST(verdict("pypi.org", 8443, pub) == "port-not-listed");
  BOOST_TEST(verdict("files.pythonhosted.org", 443, pub) == "admitted");
  BOOST_TEST(verdict("a.b.pythonhosted.org", 443, pub) == "admitted");
  BOOST_TEST(verdict("pythonhosted.org", 443, pub) == "not-listed");
  BOOST_TEST(verdict("evilpythonhosted.org", 443, pub) == "not-listed");
  BOOST_TEST(verdict("pypi.org.evil.com", 443, pub) == "not-listed");
  // Only a host name is matched: a resolver reads a C string, so a NUL (or any byte
  // outside the grammar) would make the name matched and the name resolved differ (R6-N1).
  using namespace std::string_view_literals;
  for (std::string_view odd : {"evil.com\0.pythonhosted.org"sv, "evil.com/.pythonhosted.org"sv,
                               "evil.com .pythonhosted.org"sv, "*.pythonhosted.org"sv,
                               "evil.com%00.pythonhosted.org"sv, "a..pythonhosted.org"sv})
    BOOST_TEST(verdict(odd, 443, pub) == "not-listed", odd.substr(0, 8));
  BOOST_TEST(verdict("github.com", 22, pub) == "admitted");
  BOOST_TEST(verdict("github.com", 443, pub) == "port-not-listed");
  BOOST_TEST(verdict("151.101.0.223", 443, {}) == "not-listed");
  BOOST_TEST(verdict("192.0.2.7", 443, {}) == "admitted");
  BOOST_TEST(verdict("pypi.org", 443, {}) == "not-resolved");
  for (const char* bad : {"127.0.0.1", "10.0.0.5", "192.168.0.1", "172.20.0.1", "fd12::1",
                          "169.254.169.254", "fe80::1", "224.0.0.251", "0.0.0.0", "::",
                          "::ffff:127.0.0.1", "::ffff:151.101.0.223", "::1"}) {
    BOOST_TEST_CONTEXT(bad) {
      BOOST_TEST(verdict("pypi.org", 443, addrs({bad})) == "address-refused");
      // One bad address among good ones refuses the lot: a rebinding answer.
      BOOST_TEST(verdict("pypi.org", 443, addrs({"151.101.0.223", bad})) == "address-refused");
    }
  }
  // localhost:PORT is the one way to the host's loopback, and only on its port.
  auto local =
      compiler::admit(allow, "localhost", 5432, addrs({"203.0.113.9"}), routes_with_local());
  BOOST_TEST(local.admitted);
  BOOST_TEST(local.address->str() == "127.0.0.1");
  BOOST_TEST(verdict("localhost", 5433, {}) == "port-not-listed");
  BOOST_TEST(verdict("127.0.0.1", 5432, {}) == "not-listed");
  // The admitted address is the one checked: the first the resolver returned.
  auto a = compiler::admit(allow, "pypi.org", 443, addrs({"151.101.0.223", "151.101.64.223"}),
                           routes_with_local());
  BOOST_TEST(a.address->str() == "151.101.0.223");
  BOOST_TEST(a.entry->value.str() == "pypi.org:443");
}

// A13B-3, A14B-9: an address whose route the kernel says is this host's (local,
// broadcast, anycast, multicast), and every IPv6 form that carries one, reaches the host
// itself; an address whose route cannot be read is refused as well; its neighbours, and an
// address without a route (the connect fails), are not the host.
BOOST_AUTO_TEST_CASE(addresses_that_reach_the_host_itself) {
  const auto own = addrs({"192.0.2.2", "192.0.2.255", "2001:db8::2", "127.0.0.1", "::1"});
  const auto unreadable = addrs({"198.51.100.9"});
  const auto unrouted = addrs({"203.0.113.7", "2001:db8:7::1"});
  std::vector<ir::IpAddress> asked;
  const ir::RouteOf route_of = [&](const ir::IpAddress& a) {
    asked.push_back(a);
    if (std::find(own.begin(), own.end(), a) != own.end())
      return ir::RouteAnswer{ir::Delivery::ThisHost, "a local route"};
    if (std::find(unreadable.begin(), unreadable.end(), a) != unreadable.end())
      return ir::RouteAnswer{ir::Delivery::Unknown, "no answer to the question"};
    if (std::find(unrouted.begin(), unrouted.end(), a) != unrouted.end())
      return ir::RouteAnswer{ir::Delivery::NoRoute, "Network is unreachable"};
    return ir::RouteAnswer{ir::Delivery::Elsewhere, "a unicast route"};
  };
  for (const char* reaches :
       {"192.0.2.2", "2001:db8::2", "192.0.2.255", "0.0.0.0", "::", "::ffff:192.0.2.2",
        "::ffff:0:c000:202", "64:ff9b::c000:202", "2002:c000:202::1", "2002:c000:202:9::",
        "2001:0:c000:202::ffff:ffff", "2001:0:808:808::3fff:fdfd", "2001:db8::5efe:c000:202",
        "fe80::200:5efe:c000:202", "::ffff:0.0.0.0", "64:ff9b::", "::c000:202"})
    BOOST_TEST_CONTEXT(reaches) {
      const auto r = ir::reaches_host(*ir::IpAddress::parse(reaches), route_of);
      BOOST_TEST((r && r->delivery == ir::Delivery::ThisHost));
    }
  const auto unknown = ir::reaches_host(*ir::IpAddress::parse("198.51.100.9"), route_of);
  BOOST_TEST((unknown && unknown->delivery == ir::Delivery::Unknown &&
              unknown->what == "no answer to the question"));
  BOOST_TEST(ir::reaches_host(*ir::IpAddress::parse("64:ff9b::c633:6409"), route_of).has_value());
  for (const char* other :
       {"192.0.2.1", "192.0.2.3", "2001:db8::1", "2001:db8::2:0", "8.8.8.8", "::ffff:8.8.8.8",
        "64:ff9b::808:808", "2002:808:808::1", "2001:0:808:808::f7f7:f7f7", "2001:db8::c000:202",
        "2001:db8::5efe:808:808", "::808:808", "203.0.113.7", "2001:db8:7::1"})
    BOOST_TEST_CONTEXT(other) {
      BOOST_TEST(!ir::reaches_host(*ir::IpAddress::parse(other), route_of).has_value());
    }
  // The kernel is asked for the address and for each IPv4 address it carries, and never
  // for 0.0.0.0 or ::.
  asked.clear();
  ir::reaches_host(*ir::IpAddress::parse("2001:0:808:808::f7f7:f7f7"), route_of);
  BOOST_TEST(asked == addrs({"2001:0:808:808::f7f7:f7f7", "8.8.8.8", "8.8.8.8"}));
  asked.clear();
  ir::reaches_host(*ir::IpAddress::parse("0.0.0.0"), route_of);
  BOOST_TEST(asked.empty());
  BOOST_TEST(ir::carried_ipv4(*ir::IpAddress::parse("192.0.2.2")).empty());
  BOOST_TEST(ir::carried_ipv4(*ir::IpAddress::parse("2001:4860::1")).empty());
  const auto teredo =
      ir::carried_ipv4(*ir::IpAddress::parse("2001:0:4136:e378:8000:63bf:80ff:fffe"));
  BOOST_TEST_REQUIRE(teredo.size() == 2u);
  BOOST_TEST(teredo[0].str() == "65.54.227.120");
  BOOST_TEST(teredo[1].str() == "127.0.0.1");
}

BOOST_AUTO_TEST_CASE(admission_refuses_a_name_that_reaches_the_host_itself) {
  const auto allow = allow_of("pypi.org, localhost:5432, ip:192.0.2.2:443");
  const auto route_of = routes_with_local({"192.0.2.2", "2001:db8::2", "127.0.0.1"});
  auto verdict = [&](std::string_view name, uint16_t port, const std::vector<ir::IpAddress>& a) {
    auto r = compiler::admit(allow, name, port, a, route_of);
    return r.admitted ? std::string("admitted") : std::string(compiler::to_string(*r.refusal));
  };
  BOOST_TEST(verdict("pypi.org", 443, addrs({"192.0.2.1"})) == "admitted");
  for (const char* own : {"192.0.2.2", "2001:db8::2", "64:ff9b::c000:202", "2002:c000:202::"})
    BOOST_TEST_CONTEXT(own) {
      BOOST_TEST(verdict("pypi.org", 443, addrs({own})) == "address-refused");
      BOOST_TEST(verdict("pypi.org", 443, addrs({"192.0.2.1", own})) == "address-refused");
    }
  const auto r = compiler::admit(allow, "pypi.org", 443, addrs({"2001:db8::2"}), route_of);
  BOOST_TEST(r.reason ==
             "pypi.org:443 resolves to 2001:db8::2, which reaches this host (a local route; "
             "only localhost:PORT entries reach the host's own services)");
  BOOST_TEST(verdict("192.0.2.2", 443, {}) == "address-refused");  // a listed literal too
  BOOST_TEST(verdict("localhost", 5432, {}) == "admitted");        // the one way to it
  // A route that cannot be read refuses (fail closed); the kernel is not asked for
  // localhost:PORT, which is the host's loopback by definition.
  const auto unread = compiler::admit(
      allow, "pypi.org", 443, addrs({"192.0.2.1"}), [](const ir::IpAddress&) {
        return ir::RouteAnswer{ir::Delivery::Unknown, "cannot ask the kernel's routes (socket): "
                                                      "Too many open files"};
      });
  BOOST_TEST(!unread.admitted);
  BOOST_TEST(unread.reason ==
             "pypi.org:443 resolves to 192.0.2.1, whose route cannot be read: cannot ask the "
             "kernel's routes (socket): Too many open files");
  bool asked = false;
  BOOST_TEST(compiler::admit(allow, "localhost", 5432, {}, [&](const ir::IpAddress&) {
               asked = true;
               return ir::RouteAnswer{};
             }).admitted);
  BOOST_TEST(!asked);
}

// Property: over random allow lists and random requests, admit() admits exactly when an
// entry names the host on that port (by the definition of the language, computed here
// independently) and every address is public.
BOOST_AUTO_TEST_CASE(admission_agrees_with_the_policy_on_random_requests) {
  std::mt19937 rng(15);
  const std::vector<std::string> labels = {"a", "b", "pypi", "org", "com", "x-y"};
  const std::vector<uint16_t> ports = {22, 80, 443, 8080};
  const std::vector<const char*> pool = {"151.101.0.223", "8.8.4.4", "10.0.0.1", "127.0.0.1",
                                         "169.254.169.254", "2606:4700::1", "fd00::2"};
  auto name = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += (i ? "." : "") + labels[rng() % labels.size()];
    return s;
  };
  for (int round = 0; round < 300; ++round) {
    std::string entries;
    std::vector<std::tuple<bool, std::string, std::optional<uint16_t>>> spec;
    for (size_t i = 0, n = 1 + rng() % 4; i < n; ++i) {
      const bool wild = rng() % 3 == 0;
      std::string host = name(2 + rng() % 2);
      if (host.find('.') == std::string::npos || std::isdigit(host.back())) continue;
      std::optional<uint16_t> port;
      if (rng() % 2) port = ports[rng() % ports.size()];
      spec.emplace_back(wild, host, port);
      entries += std::string(entries.empty() ? "" : ", ") + (wild ? "\"*." : "\"") + host +
                 (port ? ":" + std::to_string(*port) : "") + "\"";
    }
    if (spec.empty()) continue;
    auto parsed = test::parse(policy_with(entries));
    BOOST_TEST_REQUIRE(parsed.errors == "", entries);
    for (int q = 0; q < 40; ++q) {
      const std::string host = name(1 + rng() % 4);
      const uint16_t port = ports[rng() % ports.size()];
      std::vector<ir::IpAddress> a;
      for (size_t i = 0, n = rng() % 3; i < n; ++i) a.push_back(*ir::IpAddress::parse(pool[rng() % pool.size()]));
      bool listed = false;
      for (const auto& [wild, h, p] : spec) {
        const bool host_ok = wild ? host.size() > h.size() + 1 && host.ends_with("." + h) : host == h;
        const bool port_ok = p ? *p == port : (port == 80 || port == 443);
        listed = listed || (host_ok && port_ok);
      }
      bool all_public = !a.empty();
      for (const auto& x : a) all_public = all_public && ir::scope_of(x) == ir::AddressScope::Public;
      const auto got = compiler::admit(parsed.policy->allow, host, port, a, routes_with_local());
      BOOST_TEST_CONTEXT(entries << " ? " << host << ":" << port) {
        BOOST_TEST(got.admitted == (listed && all_public));
        if (got.admitted) BOOST_TEST(got.address->str() == a.front().str());
      }
    }
  }
}

// The analyzer proves the only way out is the sandbox's own loopback, where the proxy
// listens: an argv without --unshare-net, or a filter that lets AF_UNIX or netlink
// sockets through, is a finding (exit 3), and explain answers for a destination.
BOOST_AUTO_TEST_CASE(the_analyzer_refuses_an_allow_list_artifact_with_another_way_out) {
  test::Cli cli;
  cli.copy_golden("allow-list.yaml", "p.yaml");
  cli.dir.write("full.yaml", "zpolicy: 1\nmode: workspace-write\nnetwork: full\n");
  BOOST_TEST_REQUIRE(cli.run({"compile", "p.yaml", "--target", "linux", "--out", "a"}).exit_code == 0);
  BOOST_TEST_REQUIRE(cli.run({"compile", "full.yaml", "--target", "linux", "--out", "f"}).exit_code == 0);
  BOOST_TEST(cli.run({"verify", "p.yaml", "a", "--target", "linux"}).exit_code == 0);
  const std::string args = test::slurp(cli.dir / "a/bwrap.args");
  const std::string without = args.substr(0, args.find("--unshare-net\n")) +
                              args.substr(args.find("--unshare-net\n") + 14);
  cli.dir.write("a/bwrap.args", without);
  auto r = cli.run({"verify", "p.yaml", "a", "--target", "linux"});
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(r.err.find("--unshare-net") != std::string::npos, r.err);
  cli.dir.write("a/bwrap.args", args);
  cli.dir.write("a/seccomp.bpf", test::slurp(cli.dir / "f/seccomp.bpf"));
  r = cli.run({"verify", "p.yaml", "a", "--target", "linux"});
  BOOST_TEST(r.exit_code == 3);
  BOOST_TEST(r.err.find("x86_64 socket(0x1,") != std::string::npos, r.err);

  r = cli.run({"explain", "--policy", "p.yaml", "--connect", "pypi.org:443"});
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(r.out.find("admitted — allowed by 'pypi.org:443' at p.yaml:6:7") != std::string::npos, r.out);
  r = cli.run({"explain", "--policy", "p.yaml", "--connect", "pypi.org:8080"});
  BOOST_TEST(r.out.find("refused (port-not-listed)") != std::string::npos, r.out);
  r = cli.run({"explain", "--policy", "p.yaml", "--connect", "169.254.169.254:80"});
  BOOST_TEST(r.out.find("refused (not-listed)") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy
