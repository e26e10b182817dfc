#pragma once

// Two hosts for the kernel suites whose servers the sandbox reaches through zpolicy's proxy
// (kernel_network_allow, kernel_network_clients, kernel_redteam6).

#include <string>
#include <vector>

namespace zpolicy::tests::kernel {

// Red team A13B-3: the test's own network namespace is "this host" (zpolicy's proxy
// connects from it, and refuses every address it holds); a second one, joined to it by a
// veth pair, is "another host" that holds the public test servers. This host: kThisHostV4/24 and
// kThisHostV6/64 on its end of the pair, and a route through the other host to each address the
// other host holds on its loopback.
inline constexpr const char* kThisHostV4 = "192.0.2.2";
inline constexpr const char* kThisHostV6 = "2001:db8::2";
inline constexpr const char* kOtherHostV4 = "192.0.2.1";
inline constexpr const char* kOtherHostV6 = "2001:db8::1";

struct TwoHosts {
  std::string hosts_file;                    // bind-mounted on /etc/hosts (both hosts)
  std::vector<std::string> other_addresses;  // IPv4, held on the other host's loopback
  std::string on_other_host;                 // sh, started in the background there
  std::string on_this_host = ":";            // sh, started in the background here
  std::vector<std::string> ready_files;      // waited for (10 s at most) before the run
};

// A RunSpec::root_prefix (as root, before setpriv) that makes both hosts in private network
// and mount namespaces of the test (the host's interfaces, routes and /etc/hosts stay
// untouched), starts their commands, and runs the caller's zpolicy on this host. The
// commands' output goes to HOSTS_FILE.other.log and .this.log: a server that outlives the
// run must not hold the run's pipes open (Sandbox::finish reads them to their end). Each
// host is set up by one `ip -batch` (a process start costs more than the work), and the two
// shells meet at two FIFOs, HOSTS_FILE.up and .go, rather than polling.
inline std::vector<std::string> on_two_hosts(const TwoHosts& t) {
  std::string here =
      std::string("link set lo up\nlink add zph0 type veth peer name zpo1 netns $o\n") +
      "addr add " + kThisHostV4 + "/24 brd + dev zph0\naddr add " + kThisHostV6 +
      "/64 dev zph0 nodad\nlink set zph0 up\n";
  std::string there = "link set lo up\n";
  for (const auto& a : t.other_addresses) {
    here += "route add " + a + "/32 via " + kOtherHostV4 + "\n";
    there += "addr add " + a + "/32 dev lo\n";
  }
  there += std::string("addr add ") + kOtherHostV4 + "/24 brd + dev zpo1\naddr add " +
           kOtherHostV6 + "/64 dev zpo1 nodad\nlink set zpo1 up\n";
  std::string wait;
  for (const auto& f : t.ready_files)
    wait += "i=0; until [ -e '" + f +
            "' ]; do [ $i -lt 1000 ] || exit 98; i=$((i+1)); sleep 0.01; done\n";
  // The other host says on .up that it has its own network namespace (unshare execs the
  // shell in place: $! is that process), and waits on .go until both ends are set up.
  const std::string script =
      "f='" + t.hosts_file + "'\n" +
      "mkfifo \"$f.up\" \"$f.go\" && mount --bind \"$f\" /etc/hosts || exit 97\n"
      "/usr/bin/unshare -n /bin/sh -c 'echo >\"$0.up\"; read x <\"$0.go\"; " +
      t.on_other_host +
      "' \"$f\" >\"$f.other.log\" 2>&1 &\n"
      "o=$!\n"
      "read x <\"$f.up\"\n"
      "ip -batch - <<EOF || exit 96\n" +
      here + "EOF\n" + "nsenter -t $o -n ip -batch - <<EOF || exit 95\n" + there + "EOF\n" +
      "echo >\"$f.go\"\n"
      "(" +
      t.on_this_host + ") >\"$f.this.log\" 2>&1 &\n" + wait + "exec \"$@\"";
  return {"/usr/bin/unshare", "-mn", "--propagation", "private", "/bin/sh", "-c", script, "sh"};
}

}  // namespace zpolicy::tests::kernel
