// The proxy's question to the kernel, "how is a connection to this address routed?", and
// the reading of its answer (runner/route_lookup), on bytes laid out as rtnetlink's; the
// kernel itself answers in the kernel suite kernel_network_allow.
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <cstring>
#include <map>

#include "runner/route_lookup.hpp"

namespace zpolicy {
namespace {

using runner::Endpoint;

Endpoint at(const char* address, uint16_t port) { return {*ir::IpAddress::parse(address), port}; }

// The attributes of a request, by type, after its header and rtmsg.
std::map<uint16_t, std::vector<std::byte>> attributes(const std::vector<std::byte>& m) {
  std::map<uint16_t, std::vector<std::byte>> out;
  for (size_t at = NLMSG_SPACE(sizeof(rtmsg)); at + sizeof(rtattr) <= m.size();) {
    rtattr a;
    std::memcpy(&a, m.data() + at, sizeof a);
    BOOST_TEST_REQUIRE(a.rta_len >= sizeof a);
    BOOST_TEST_REQUIRE(at + a.rta_len <= m.size());
    out[a.rta_type].assign(m.data() + at + RTA_LENGTH(0), m.data() + at + a.rta_len);
    at += RTA_ALIGN(a.rta_len);
  }
  return out;
}

std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

// One message as the kernel lays it out: header, then `body`, padded.
std::vector<std::byte> message(uint16_t type, uint32_t seq, const void* body, size_t size,
                               uint32_t claimed_length = 0) {
  std::vector<std::byte> m(NLMSG_SPACE(size));
  nlmsghdr h{};
  h.nlmsg_len = claimed_length ? claimed_length : static_cast<uint32_t>(NLMSG_LENGTH(size));
  h.nlmsg_type = type;
  h.nlmsg_seq = seq;
  std::memcpy(m.data(), &h, sizeof h);
  std::memcpy(m.data() + NLMSG_HDRLEN, body, size);
  return m;
}

std::vector<std::byte> route_of_type(uint8_t type, uint32_t seq) {
  rtmsg r{};
  r.rtm_family = AF_INET;
  r.rtm_type = type;
  return message(RTM_NEWROUTE, seq, &r, sizeof r);
}

std::vector<std::byte> error_of(int error, uint32_t seq) {
  nlmsgerr e{};
  e.error = error;
  return message(NLMSG_ERROR, seq, &e, sizeof e);
}

std::string read(const std::vector<std::byte>& answer, uint32_t seq) {
  const ir::RouteAnswer r = runner::parse_route_answer(answer, seq);
  const char* kinds[] = {"elsewhere", "this-host", "no-route", "unknown"};
  return std::string(kinds[static_cast<int>(r.delivery)]) + ": " + r.what;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(network_routes)

BOOST_AUTO_TEST_CASE(the_question_names_the_destination_its_protocol_and_its_ports) {
  const auto v4 = runner::route_request(at("203.0.113.5", 18081), std::nullopt, 7);
  nlmsghdr h;
  std::memcpy(&h, v4.data(), sizeof h);
  BOOST_TEST(h.nlmsg_len == v4.size());
  BOOST_TEST(h.nlmsg_type == RTM_GETROUTE);
  BOOST_TEST(h.nlmsg_flags == NLM_F_REQUEST);  // no NLM_F_DUMP: the one route a connect takes
  BOOST_TEST(h.nlmsg_seq == 7u);
  rtmsg r;
  std::memcpy(&r, v4.data() + NLMSG_HDRLEN, sizeof r);
  BOOST_TEST(r.rtm_family == AF_INET);
  BOOST_TEST(r.rtm_dst_len == 32);
  BOOST_TEST(r.rtm_src_len == 0);
  auto a = attributes(v4);
  BOOST_TEST(a.size() == 3u);
  BOOST_TEST((a[RTA_DST] == bytes({203, 0, 113, 5})));
  BOOST_TEST((a[RTA_DPORT] == bytes({0x46, 0xa1})));
  BOOST_TEST((a[RTA_IP_PROTO] == bytes({IPPROTO_TCP})));

  // Once connected: its source address and port too, for rules that select on them.
  const auto v6 = runner::route_request(at("2001:db8:5::7", 443), at("2001:db8::2", 40000), 8);
  std::memcpy(&r, v6.data() + NLMSG_HDRLEN, sizeof r);
  BOOST_TEST(r.rtm_family == AF_INET6);
  BOOST_TEST(r.rtm_dst_len == 128);
  BOOST_TEST(r.rtm_src_len == 128);
  a = attributes(v6);
  BOOST_TEST(a.size() == 5u);
  BOOST_TEST((a[RTA_DST] ==
              bytes({0x20, 0x01, 0x0d, 0xb8, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7})));
  BOOST_TEST((a[RTA_SRC] ==
              bytes({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2})));
  BOOST_TEST((a[RTA_DPORT] == bytes({0x01, 0xbb})));
  BOOST_TEST((a[RTA_SPORT] == bytes({0x9c, 0x40})));
}

BOOST_AUTO_TEST_CASE(the_answer_is_read_by_the_type_of_the_route) {
  BOOST_TEST(read(route_of_type(RTN_UNICAST, 3), 3) == "elsewhere: a unicast route");
  BOOST_TEST(read(route_of_type(RTN_LOCAL, 3), 3) == "this-host: a local route");
  BOOST_TEST(read(route_of_type(RTN_BROADCAST, 3), 3) == "this-host: a broadcast route");
  BOOST_TEST(read(route_of_type(RTN_ANYCAST, 3), 3) == "this-host: an anycast route");
  BOOST_TEST(read(route_of_type(RTN_MULTICAST, 3), 3) == "this-host: a multicast route");
  BOOST_TEST(read(route_of_type(RTN_BLACKHOLE, 3), 3) == "no-route: a blackhole route");
  BOOST_TEST(read(route_of_type(RTN_UNREACHABLE, 3), 3) == "no-route: an unreachable route");
  BOOST_TEST(read(route_of_type(RTN_PROHIBIT, 3), 3) == "no-route: a prohibit route");
  BOOST_TEST(read(route_of_type(RTN_NAT, 3), 3) == "unknown: a route of type 10");
  BOOST_TEST(read(route_of_type(RTN_UNSPEC, 3), 3) == "unknown: a route of type 0");
  // A lookup that finds no delivering route answers an error, as the connect would fail.
  BOOST_TEST(read(error_of(-ENETUNREACH, 3), 3) == "no-route: Network is unreachable");
  BOOST_TEST(read(error_of(-EHOSTUNREACH, 3), 3) == "no-route: No route to host");
  BOOST_TEST(read(error_of(-EACCES, 3), 3) == "no-route: Permission denied");
  BOOST_TEST(read(error_of(-EINVAL, 3), 3) == "no-route: Invalid argument");
}

// Whatever is not a well-formed answer to this question is Unknown, which refuses.
BOOST_AUTO_TEST_CASE(an_answer_that_cannot_be_read_is_unknown) {
  BOOST_TEST(read({}, 3) == "unknown: no answer to the question");
  BOOST_TEST(read(route_of_type(RTN_LOCAL, 2), 3) == "unknown: no answer to the question");
  BOOST_TEST(read(error_of(-ENOMEM, 3), 3) ==
             "unknown: the kernel answered: Cannot allocate memory");
  BOOST_TEST(read(error_of(0, 3), 3) == "unknown: an answer that is no route");
  auto longer = route_of_type(RTN_UNICAST, 3);
  BOOST_TEST(read(message(RTM_NEWROUTE, 3, longer.data(), 4), 3) == "unknown: a malformed answer");
  rtmsg r{};
  BOOST_TEST(read(message(RTM_NEWROUTE, 3, &r, sizeof r, 4096), 3) ==
             "unknown: a malformed answer");
  BOOST_TEST(read(message(RTM_NEWROUTE, 3, &r, sizeof r, 3), 3) == "unknown: a malformed answer");
  nlmsgerr e{};
  BOOST_TEST(read(message(NLMSG_ERROR, 3, &e, 4), 3) == "unknown: a malformed answer");
  auto cut = route_of_type(RTN_UNICAST, 3);
  cut.resize(sizeof(nlmsghdr) - 1);
  BOOST_TEST(read(cut, 3) == "unknown: no answer to the question");
  // A message for another question is passed over; this question's answer after it is read.
  auto two = route_of_type(RTN_UNICAST, 2);
  const auto mine = route_of_type(RTN_LOCAL, 3);
  two.insert(two.end(), mine.begin(), mine.end());
  BOOST_TEST(read(two, 3) == "this-host: a local route");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace zpolicy
