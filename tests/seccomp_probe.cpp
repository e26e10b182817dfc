// Makes raw system calls inside a sandbox and prints what each returned, one line per
// argument, so that the kernel tests can check the loaded seccomp filter from outside.
//   NR[,A0,...,A5]     syscall(NR, A0..A5) -> "ret=R" or "errno=E"
//   socketpair         socketpair(AF_UNIX, SOCK_STREAM, 0) -> "ret=0" or "errno=E"
//   fork:NR[,A0...]    the same call in a child -> "exit=0" / "signal=S"
//   int80:NR           an i386 call through `int 0x80` in a child -> "exit=E" / "signal=S"
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::vector<unsigned long> numbers(const std::string& s) {
  std::vector<unsigned long> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = s.find(',', pos);
    const std::string part = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    out.push_back(std::strtoul(part.c_str(), nullptr, 0));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  out.resize(7, 0);
  return out;
}

void raw_call(const std::vector<unsigned long>& n) {
  errno = 0;
  const long r = syscall(static_cast<long>(n[0]), n[1], n[2], n[3], n[4], n[5], n[6]);
  if (r == -1) std::printf("errno=%d\n", errno);
  else std::printf("ret=%ld\n", r);
}

long int80(unsigned long nr) {
  long ret;
  asm volatile("int $0x80"
               : "=a"(ret)
               : "a"(nr), "b"(0), "c"(0), "d"(0), "S"(0), "D"(0)
               : "memory");
  return ret;
}

template <class F>
void in_child(F f) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    std::printf("fork errno=%d\n", errno);
    return;
  }
  if (pid == 0) _exit(f());
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) std::printf("signal=%d\n", WTERMSIG(status));
  else std::printf("exit=%d\n", WEXITSTATUS(status));
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "socketpair") {
      int sv[2];
      if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) std::printf("ret=0\n");
      else std::printf("errno=%d\n", errno);
    } else if (a.rfind("fork:", 0) == 0) {
      const auto n = numbers(a.substr(5));
      in_child([&] {
        return syscall(static_cast<long>(n[0]), n[1], n[2], n[3], n[4], n[5], n[6]) == -1 ? errno
                                                                                          : 0;
      });
    } else if (a.rfind("int80:", 0) == 0) {
      const unsigned long nr = std::strtoul(a.c_str() + 6, nullptr, 0);
      in_child([&] {
        const long r = int80(nr);
        return r < 0 ? static_cast<int>(-r) : 0;
      });
    } else {
      raw_call(numbers(a));
    }
    std::fflush(stdout);
  }
  return 0;
}
