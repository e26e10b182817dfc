#include "tests/fuzz/mutator.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

namespace zpolicy::fuzz {
namespace {

using Words = std::vector<std::string_view>;

// Bytes parsers of these formats treat specially.
constexpr char kSpecialChars[] = "\0\n\r\t \"'\\/$.{}[]():,#*~-=;|&!?%@`\x7f\xff\xc3\xa9";
constexpr std::string_view kSpecialBytes{kSpecialChars, sizeof kSpecialChars - 1};

const Words kPaths = {
    "/", "/etc", "/etc/passwd", "/dev/sda", "/proc", "/proc/self/mem", "/sys", "/tmp",
    "/var/tmp/victim", "/usr", "/Users", "//", "/./", "/a/../b", "/a/./b", "relative", "",
    "${WORKSPACE}", "${WORKSPACE}/.git", "${WORKSPACE}/.env", "${WORKSPACE}/../x",
    "${HOME}", "${HOME}/.ssh", "${TMPDIR}", "${NOPE}", "${WORKSPACE", "~", "~/x", "~root",
    "**/.git", "*", "packages/*/.env", "**", "/run/zpolicy", "/a\\b", "/\xff\xfe"};

const Words kYamlWords = {
    "zpolicy", "mode", "filesystem", "read", "write", "protect", "deny", "network", "allow",
    "syscalls", "action", "default", "process", "env", "keep", "set", "timeout", "unavailable",
    "read-only", "workspace-write", "danger-full-access", "read_only", "none", "loopback",
    "full", "errno", "kill", "run-unconfined", "120s", "0ms", "99999999999999999999h", "8d",
    "-1s", "ptrace", "clone3", "open", "[]", "{}", "null", "~", "!!binary", "&a", "*a",
    "<<: *a", "? ", "|", ">-", "---", "...", "%YAML 1.2", "\"\\0\"", "\"\\n\"", "'", "\"",
    "pypi.org", "*.pythonhosted.org", "github.com:22", "localhost:5432", "localhost:99999",
    "[::1]:80", "127.0.0.1", "LC_*", "PATH", "0", "1", "2", "-", ": ", "#", "\t"};

const Words kYamlLines = {
    "  deny: [\"/etc\", \"${HOME}/.ssh\"]",
    "  read: [\"/usr\", \"/lib\"]",
    "  write: [\"${WORKSPACE}\", \"${TMPDIR}\", \"~/cache\"]",
    "  protect: [\"**/.git\", \"packages/*/.env\", .env]",
    "network:\n  allow: [pypi.org, \"*.pythonhosted.org\", \"github.com:22\", \"localhost:5432\"]",
    "network: loopback",
    "syscalls:\n  default: errno\n  allow: [read, write, exit_group]",
    "syscalls:\n  deny: [ptrace]\n  action: kill",
    "process:\n  env: {keep: [PATH], set: {CI: \"true\"}}\n  timeout: 7d",
    "mode: read-only",
    "mode: danger-full-access",
    "unavailable: run-unconfined",
    "zpolicy: 2",
    "a: &x [1, 2]\nb: *x",
    "    - \"${WORKSPACE}/**/node_modules\"",
    "    - ~/.aws"};

const Words kArgvOptions = {
    "--bind", "--ro-bind", "--dev-bind", "--bind-try", "--ro-bind-try", "--dev-bind-try",
    "--remount-ro", "--tmpfs", "--dev", "--proc", "--dir", "--symlink", "--chmod", "--perms",
    "--size", "--unshare-user", "--unshare-user-try", "--unshare-ipc", "--unshare-pid",
    "--unshare-net", "--unshare-uts", "--unshare-cgroup", "--unshare-cgroup-try",
    "--unshare-all", "--share-net", "--new-session", "--die-with-parent", "--disable-userns",
    "--cap-drop", "--cap-add", "--seccomp", "--chdir", "--setenv", "--bind-data", "--userns",
    "--", "--args", "--ro-bind-data", "--overlay", "--clearenv", "--as-pid-1", "-"};

const Words kArgvValues = {"ALL", "CAP_SYS_ADMIN", "0755", "7777", "0", "-1", "1000000",
                           "99999999999999999999", "3", "10", "x", "0x10", "1e3"};

const Words kSexprForms = {
    "(allow file-write* (subpath \"/Users\"))",
    "(allow file-write* (literal \"/etc/passwd\"))",
    "(allow file-write* (subpath \"/etc\"))",
    "(allow file-read* (subpath (param \"WRITABLE_ROOT_WORKSPACE\")))",
    "(deny file-write* (regex #\"^/x/\"))",
    "(allow file-write* (regex #\"^(/.*)?$\"))",
    "(allow file-write* (prefix \"/\"))",
    "(allow file-write-create (require-all (subpath \"/\") (require-not (literal \"/x\"))))",
    "(allow network*)",
    "(allow network-outbound (remote ip \"*:*\"))",
    "(allow default)",
    "(allow process-exec (literal \"/bin/sh\"))",
    "(allow signal)",
    "(param \"NOPE\")",
    "(version 2)",
    "(import \"system.sb\")",
    "(require-any)",
    "(deny file-read* (vnode-type SYMLINK))"};

const Words kSexprWords = {"(", ")", "\"", "#\"", ";", "#|", "|#", "require-any",
                           "require-all", "require-not", "subpath", "literal", "prefix",
                           "regex", "param", "allow", "deny", "file-write*", "file-read*",
                           "with", "report", "#t", "#f", "1", "-1"};

const Words kParamNames = {"WRITABLE_ROOT_WORKSPACE", "WRITABLE_ROOT_TMPDIR", "PROTECTED_WORKSPACE_GIT",
                           "PROTECTED_WORKSPACE_GIT_2", "PROTECTED_ANCESTOR_WORKSPACE_DATA",
                           "DENY_ROOT_HOME", "DENY_ROOT_HOME_SSH", "HOME", "", "A B", "=",
                           "WRITABLE_ROOT_0"};

const Words kJsonWords = {
    "\"defaultAction\": \"SCMP_ACT_ALLOW\"", "\"SCMP_ACT_ERRNO\"", "\"SCMP_ACT_KILL\"",
    "\"SCMP_ACT_KILL_PROCESS\"", "\"SCMP_ACT_KILL_THREAD\"", "\"SCMP_ACT_TRAP\"",
    "\"SCMP_ACT_LOG\"", "\"SCMP_ACT_TRACE\"", "\"SCMP_ACT_NOTIFY\"", "\"errnoRet\": 1",
    "\"defaultErrnoRet\": 38", "\"names\": [\"ptrace\", \"clone3\", \"nosuch\"]",
    "{\"names\": [\"personality\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 0, "
    "\"value\": 4294967295, \"valueTwo\": 8, \"op\": \"SCMP_CMP_MASKED_EQ\"}]}",
    "\"SCMP_CMP_NE\"", "\"SCMP_CMP_LT\"", "\"SCMP_CMP_LE\"", "\"SCMP_CMP_EQ\"",
    "\"SCMP_CMP_GE\"", "\"SCMP_CMP_GT\"", "\"index\": 6", "\"value\": 18446744073709551615",
    "\"value\": 18446744073709551616", "-1", "1e400", "1.5", "-0", "\"\\u0000\"",
    "\"\\ud800\"", "\"\\uDFFF\\uD800\"", "null", "true", "{}", "[]",
    "\"includes\": {\"caps\": [\"CAP_SYS_ADMIN\"]}", "\"excludes\": {\"arches\": [\"amd64\"]}",
    "\"minKernel\": \"4.8\"", "\"architectures\": [\"SCMP_ARCH_X86_64\"]", "\"archMap\": []",
    "\"\\", ",", ":", "\"", "{", "}", "[", "]"};

// Classic BPF opcodes a seccomp filter may hold, and some it may not.
constexpr std::array<uint16_t, 42> kBpfCodes = {
    0x20, 0x28, 0x30, 0x40, 0x80, 0x00, 0x01, 0x81, 0x60, 0x61, 0x02, 0x03, 0x04, 0x0c,
    0x14, 0x24, 0x34, 0x44, 0x54, 0x64, 0x74, 0x84, 0x94, 0xa4, 0x05, 0x15, 0x25, 0x35,
    0x45, 0x1d, 0x2d, 0x3d, 0x4d, 0x06, 0x16, 0x07, 0x87, 0xb1, 0x8004, 0x0f, 0xffff, 0x3c};

constexpr std::array<uint32_t, 38> kBpfConstants = {
    0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 0xc000003eu,
    0x40000003u, 0x40000000u, 0x7fff0000u, 0x7ffc0000u, 0x7ff00000u, 0x7fc00000u,
    0x00050001u, 0x00050026u, 0x00030000u, 0x80000000u, 0xffffffffu, 101, 310, 311, 59,
    4242, 1, 15, 0x40000000u | 101, 2};

std::string_view pick(const Words& w, Rng& rng) { return w[rng.below(w.size())]; }

bool fits(const std::string& s, size_t growth) { return s.size() + growth <= kMaxInput; }

// ---- byte edits --------------------------------------------------------------------

void flip_bit(std::string& s, Rng& rng) {
  if (s.empty()) return;
  s[rng.below(s.size())] ^= static_cast<char>(1u << rng.below(8));
}

void set_byte(std::string& s, Rng& rng) {
  if (s.empty()) return;
  s[rng.below(s.size())] = rng.percent(50) ? kSpecialBytes[rng.below(kSpecialBytes.size())]
                                           : static_cast<char>(rng.below(256));
}

void insert_bytes(std::string& s, Rng& rng) {
  std::string bytes;
  const size_t n = 1 + rng.below(8);
  for (size_t i = 0; i < n; ++i)
    bytes += rng.percent(50) ? kSpecialBytes[rng.below(kSpecialBytes.size())]
                             : static_cast<char>(rng.below(256));
  if (fits(s, bytes.size())) s.insert(rng.below(s.size() + 1), bytes);
}

void delete_range(std::string& s, Rng& rng) {
  if (s.empty()) return;
  const size_t at = rng.below(s.size());
  s.erase(at, 1 + rng.below(rng.percent(80) ? 16 : s.size()));
}

void duplicate_range(std::string& s, Rng& rng) {
  if (s.empty()) return;
  const size_t at = rng.below(s.size());
  const std::string piece = s.substr(at, 1 + rng.below(64));
  if (fits(s, piece.size())) s.insert(rng.below(s.size() + 1), piece);
}

void splice(std::string& s, const std::vector<std::string>& donors, Rng& rng) {
  if (donors.empty()) return;
  const std::string& d = donors[rng.below(donors.size())];
  if (d.empty()) return;
  const size_t from = rng.below(d.size());
  const std::string piece = d.substr(from, 1 + rng.below(256));
  const size_t at = rng.below(s.size() + 1);
  const size_t cut = rng.percent(50) ? rng.below(s.size() - at + 1) : 0;
  if (fits(s, piece.size())) s.replace(at, cut, piece);
}

// ---- lines --------------------------------------------------------------------------

// [begin, end) of the line holding byte `at`, its newline included when there is one.
std::pair<size_t, size_t> line_around(const std::string& s, size_t at) {
  size_t begin = s.rfind('\n', at == 0 ? 0 : at - 1);
  begin = (begin == std::string::npos || at == 0) ? 0 : begin + 1;
  size_t end = s.find('\n', at);
  end = end == std::string::npos ? s.size() : end + 1;
  return {begin, end};
}

void duplicate_line(std::string& s, Rng& rng) {
  if (s.empty()) return;
  auto [b, e] = line_around(s, rng.below(s.size()));
  std::string line = s.substr(b, e - b);
  if (line.empty() || line.back() != '\n') line += '\n';
  if (fits(s, line.size())) s.insert(line_around(s, rng.below(s.size())).first, line);
}

void delete_line(std::string& s, Rng& rng) {
  if (s.empty()) return;
  auto [b, e] = line_around(s, rng.below(s.size()));
  s.erase(b, e - b);
}

void swap_lines(std::string& s, Rng& rng) {
  if (s.empty()) return;
  auto first = line_around(s, rng.below(s.size()));
  std::string line = s.substr(first.first, first.second - first.first);
  if (line.empty() || line.back() != '\n') return;
  s.erase(first.first, line.size());
  const size_t to = s.empty() ? 0 : line_around(s, rng.below(s.size())).first;
  s.insert(to, line);
}

// Replaces a word (a run of bytes without blanks or quotes) with `text`.
void replace_word(std::string& s, std::string_view text, Rng& rng) {
  if (s.empty()) return;
  auto word_byte = [](char c) {
    return c != ' ' && c != '\n' && c != '\t' && c != '"' && c != '\'' && c != ',' &&
           c != '[' && c != ']' && c != '(' && c != ')' && c != '{' && c != '}';
  };
  size_t at = rng.below(s.size());
  if (!word_byte(s[at])) return;
  size_t b = at, e = at;
  while (b > 0 && word_byte(s[b - 1])) --b;
  while (e < s.size() && word_byte(s[e])) ++e;
  if (fits(s, text.size())) s.replace(b, e - b, text);
}

void insert_at_line(std::string& s, std::string_view text, Rng& rng) {
  std::string line(text);
  line += '\n';
  if (!fits(s, line.size())) return;
  const size_t at = s.empty() ? 0 : line_around(s, rng.below(s.size())).first;
  s.insert(at, line);
}

// ---- hostile shapes -----------------------------------------------------------------

std::string long_path(size_t bytes, Rng& rng) {
  static const Words roots = {"/", "${WORKSPACE}/", "${HOME}/", "/proc/", "~/", "/tmp/"};
  // Mostly names every reader accepts, so that the path gets past the parsers.
  static const Words names = {"a/", "a/", "a/", "aa/", ".git/", "../", "./", "/", "x"};
  std::string p(pick(roots, rng));
  const std::string_view name = pick(names, rng);
  while (p.size() + name.size() <= bytes) p += name;
  return p;
}

std::string nesting(Grammar g, size_t depth, Rng& rng) {
  std::string open, close, inner;
  switch (g) {
    case Grammar::Yaml:
      if (rng.percent(50)) {
        open = "[", close = "]", inner = "\"/x\"";
      } else {
        open = "{a: ", close = "}", inner = "1";
      }
      break;
    case Grammar::Json:
      open = rng.percent(50) ? "[" : "{\"a\": ", close = open == "[" ? "]" : "}", inner = "1";
      break;
    case Grammar::Sexpr:
      open = rng.percent(50) ? "(require-any " : "(require-not ", close = ")",
      inner = "(subpath \"/x\")";
      break;
    default:
      open = "(", close = ")", inner = "x";
      break;
  }
  std::string out;
  out.reserve(depth * (open.size() + close.size()) + inner.size());
  for (size_t i = 0; i < depth; ++i) out += open;
  out += inner;
  if (rng.percent(90))
    for (size_t i = 0; i < depth; ++i) out += close;
  return out;
}

// YAML nesting by indentation rather than brackets: a mapping per line.
std::string yaml_block_nesting(size_t depth) {
  std::string out = "filesystem:\n";
  for (size_t i = 1; i <= depth; ++i) out += std::string(2 * i, ' ') + "a:\n";
  return out;
}

// ---- grammar-aware edits ------------------------------------------------------------

// [open, close] of a balanced bracket group starting at a random opener, found with a
// counter (never recursion): quotes are ignored, which is fine for a mutator.
std::optional<std::pair<size_t, size_t>> balanced_group(const std::string& s, char open,
                                                        char close, Rng& rng) {
  std::vector<size_t> openers;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == open) openers.push_back(i);
  if (openers.empty()) return std::nullopt;
  const size_t start = openers[rng.below(openers.size())];
  size_t depth = 0;
  for (size_t i = start; i < s.size(); ++i) {
    if (s[i] == open) ++depth;
    if (s[i] == close && --depth == 0) return std::pair{start, i};
  }
  return std::nullopt;
}

void group_edit(std::string& s, char open, char close, std::string_view separator, Rng& rng) {
  auto g = balanced_group(s, open, close, rng);
  if (!g) return;
  const std::string group = s.substr(g->first, g->second - g->first + 1);
  switch (rng.below(4)) {
    case 0:  // duplicate in place
      if (fits(s, group.size() + separator.size()))
        s.insert(g->second + 1, std::string(separator) + group);
      break;
    case 1:  // delete
      s.erase(g->first, group.size());
      break;
    case 2: {  // wrap in more of the same
      const size_t depth = 1 + rng.below(8);
      if (fits(s, 2 * depth))
        s.insert(g->second + 1, std::string(depth, close)), s.insert(g->first, std::string(depth, open));
      break;
    }
    default: {  // move elsewhere
      s.erase(g->first, group.size());
      s.insert(rng.below(s.size() + 1), group);
      break;
    }
  }
}

void repeat_piece(std::string& s, std::string_view piece, size_t max_growth, Rng& rng) {
  if (piece.empty()) return;
  const size_t copies = rng.log_uniform(std::max<size_t>(1, max_growth / piece.size()));
  std::string out;
  out.reserve(copies * piece.size());
  for (size_t i = 0; i < copies; ++i) out += piece;
  if (!fits(s, out.size())) return;
  const size_t at = s.empty() ? 0 : line_around(s, rng.below(s.size())).first;
  s.insert(at, out);
}

std::string argv_option(Rng& rng) {
  const std::string_view opt = pick(kArgvOptions, rng);
  size_t operands = 0;
  if (opt.find("bind") != std::string_view::npos || opt == "--symlink" || opt == "--chmod" ||
      opt == "--setenv")
    operands = 2;
  else if (opt == "--remount-ro" || opt == "--tmpfs" || opt == "--dev" || opt == "--proc" ||
           opt == "--dir" || opt == "--perms" || opt == "--size" || opt == "--cap-drop" ||
           opt == "--cap-add" || opt == "--seccomp" || opt == "--chdir" || opt == "--userns")
    operands = 1;
  if (rng.percent(10)) operands = rng.below(3);
  std::string out(opt);
  for (size_t i = 0; i < operands; ++i) {
    out += '\n';
    out += rng.percent(70) ? pick(kPaths, rng) : pick(kArgvValues, rng);
  }
  return out;
}

// An option line with the operand lines after it, up to the next option.
std::optional<std::pair<size_t, size_t>> argv_group(const std::string& s, Rng& rng) {
  std::vector<size_t> starts;
  size_t at = 0;
  while (at < s.size()) {
    if (s.compare(at, 2, "--") == 0) starts.push_back(at);
    const size_t nl = s.find('\n', at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  if (starts.empty()) return std::nullopt;
  const size_t i = rng.below(starts.size());
  const size_t end = i + 1 < starts.size() ? starts[i + 1] : s.size();
  return std::pair{starts[i], end};
}

void argv_edit(std::string& s, Rng& rng) {
  switch (rng.below(6)) {
    case 0:
    case 1:
      insert_at_line(s, argv_option(rng), rng);
      break;
    case 2: {  // duplicate an option with its operands
      if (auto g = argv_group(s, rng)) {
        std::string group = s.substr(g->first, g->second - g->first);
        if (group.back() != '\n') group += '\n';
        if (fits(s, group.size()))
          s.insert(rng.percent(50) ? g->second : line_around(s, rng.below(s.size() + 1)).first,
                   group);
      }
      break;
    }
    case 3:  // delete an option with its operands
      if (auto g = argv_group(s, rng)) s.erase(g->first, g->second - g->first);
      break;
    case 4:
      replace_word(s, pick(kPaths, rng), rng);
      break;
    default:
      replace_word(s, pick(kArgvOptions, rng), rng);
      break;
  }
}

void yaml_edit(std::string& s, Rng& rng) {
  switch (rng.below(5)) {
    case 0:
      insert_at_line(s, pick(kYamlLines, rng), rng);
      break;
    case 1:
      replace_word(s, pick(kYamlWords, rng), rng);
      break;
    case 2:
      replace_word(s, std::string("\"") + std::string(pick(kPaths, rng)) + "\"", rng);
      break;
    case 3: {  // a path list entry, or a flow list grown by one
      std::string entry = "    - \"" + std::string(pick(kPaths, rng)) + "\"";
      insert_at_line(s, entry, rng);
      break;
    }
    default:
      group_edit(s, '[', ']', ", ", rng);
      break;
  }
}

void sexpr_edit(std::string& s, Rng& rng) {
  switch (rng.below(4)) {
    case 0:
      insert_at_line(s, pick(kSexprForms, rng), rng);
      break;
    case 1:
      replace_word(s, pick(kSexprWords, rng), rng);
      break;
    case 2:
      replace_word(s, std::string("\"") + std::string(pick(kPaths, rng)) + "\"", rng);
      break;
    default:
      group_edit(s, '(', ')', "\n", rng);
      break;
  }
}

void params_edit(std::string& s, Rng& rng) {
  std::string line = std::string(pick(kParamNames, rng)) + "=" + std::string(pick(kPaths, rng));
  switch (rng.below(3)) {
    case 0:
      insert_at_line(s, line, rng);
      break;
    case 1:
      replace_word(s, line, rng);
      break;
    default:
      replace_word(s, pick(kPaths, rng), rng);
      break;
  }
}

void json_edit(std::string& s, Rng& rng) {
  switch (rng.below(4)) {
    case 0:
      replace_word(s, pick(kJsonWords, rng), rng);
      break;
    case 1: {
      const std::string_view w = pick(kJsonWords, rng);
      if (fits(s, w.size())) s.insert(rng.below(s.size() + 1), w);
      break;
    }
    case 2:
      group_edit(s, '{', '}', ", ", rng);
      break;
    default:
      group_edit(s, '[', ']', ", ", rng);
      break;
  }
}

// ---- BPF instructions ---------------------------------------------------------------

constexpr size_t kInsn = 8;

std::string insn(uint16_t code, uint8_t jt, uint8_t jf, uint32_t k) {
  std::string out(kInsn, '\0');
  std::memcpy(out.data(), &code, 2);
  out[2] = static_cast<char>(jt);
  out[3] = static_cast<char>(jf);
  std::memcpy(out.data() + 4, &k, 4);
  return out;
}

std::string random_insn(Rng& rng) {
  const uint16_t code = rng.percent(95) ? kBpfCodes[rng.below(kBpfCodes.size())]
                                        : static_cast<uint16_t>(rng.below(0x10000));
  const uint8_t jt = static_cast<uint8_t>(rng.percent(70) ? rng.below(4) : rng.below(256));
  const uint8_t jf = static_cast<uint8_t>(rng.percent(70) ? rng.below(4) : rng.below(256));
  const uint32_t k = rng.percent(80) ? kBpfConstants[rng.below(kBpfConstants.size())]
                                     : static_cast<uint32_t>(rng.next());
  return insn(code, jt, jf, k);
}

// The issue's prefixes: a load of one field, a comparison, an early return.
std::string bpf_prefix(Rng& rng) {
  const uint32_t offset = kBpfConstants[rng.below(17)];
  const uint32_t ret = kBpfConstants[20 + rng.below(8)];
  return insn(0x20, 0, 0, offset) + insn(0x15, 0, 1, kBpfConstants[rng.below(kBpfConstants.size())]) +
         insn(0x06, 0, 0, ret);
}

void bpf_edit(std::string& s, Rng& rng) {
  const size_t count = s.size() / kInsn;
  const size_t at = count == 0 ? 0 : rng.below(count) * kInsn;
  switch (rng.below(8)) {
    case 0:  // a fresh instruction
      if (fits(s, kInsn)) s.insert(at, random_insn(rng));
      break;
    case 1:  // overwrite one
      if (count) s.replace(at, kInsn, random_insn(rng));
      break;
    case 2:  // duplicate one
      if (count && fits(s, kInsn)) s.insert(at, s.substr(at, kInsn));
      break;
    case 3:  // delete one
      if (count) s.erase(at, kInsn);
      break;
    case 4:  // change one field
      if (count) {
        const size_t field = rng.below(4);
        if (field == 0) {
          const uint16_t code = kBpfCodes[rng.below(kBpfCodes.size())];
          std::memcpy(s.data() + at, &code, 2);
        } else if (field < 3) {
          s[at + 1 + field] = static_cast<char>(rng.below(256));
        } else {
          const uint32_t k = kBpfConstants[rng.below(kBpfConstants.size())];
          std::memcpy(s.data() + at + 4, &k, 4);
        }
      }
      break;
    case 5:  // a prefix that returns early
      if (fits(s, 3 * kInsn)) s.insert(0, bpf_prefix(rng));
      break;
    case 6:  // swap two
      if (count > 1) {
        const size_t other = rng.below(count) * kInsn;
        std::string a = s.substr(at, kInsn);
        s.replace(at, kInsn, s.substr(other, kInsn));
        s.replace(other, kInsn, a);
      }
      break;
    default:  // truncate to a whole number of instructions, or not
      if (count) s.resize(rng.below(count) * kInsn + (rng.percent(20) ? rng.below(kInsn) : 0));
      break;
  }
}

// ---- git index ----------------------------------------------------------------------

// The fixed part of a version 2 entry with SHA-1 (stat data, mode, ids, size, hash, flags)
// and the header ("DIRC", version, count): read-cache.c's layout.
constexpr size_t kIndexHeader = 12, kIndexEntryFixed = 62;

// Values the reader compares a field with: versions, file types (a gitlink, a directory
// of a sparse index), the extended flag, name lengths and counts at their edges.
constexpr std::array<uint32_t, 16> kIndexValues = {
    0,       1,       2,      3,      4,          5,           0160000, 0040000,
    0100644, 0120000, 0x4000, 0x0fff, 0x7fffffff, 0xffffffffu, 62,      0x80000000u};

void put_be32(std::string& s, size_t at, uint32_t v) {
  if (at + 4 > s.size()) return;
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>(v >> (24 - 8 * i));
}

// An extension block: a signature the reader knows ("link" names a shared index) or not,
// its size field, and that many bytes or fewer.
std::string index_extension(Rng& rng) {
  static const Words signatures = {"link", "TREE", "REUC",
                                   "sdir", "UNTR", "FSMN",
                                   "EOIE", "IEOT", std::string_view("\0\0\0\0", 4)};
  std::string out(pick(signatures, rng));
  const size_t body = rng.percent(70) ? 20 + rng.below(16) : rng.below(64);
  out += std::string(4, '\0');
  put_be32(
      out, 4,
      rng.percent(80) ? static_cast<uint32_t>(body) : kIndexValues[rng.below(kIndexValues.size())]);
  for (size_t i = 0; i < body; ++i) out += static_cast<char>(rng.below(256));
  return out;
}

void git_index_edit(std::string& s, Rng& rng) {
  // Entry starts are not known without parsing; these offsets land on one of the first
  // entries' fields (mode at 24, flags at 60) often enough.
  const size_t entry =
      kIndexHeader + (rng.percent(50) ? 0 : rng.below(4) * (kIndexEntryFixed + 10));
  const uint32_t value = kIndexValues[rng.below(kIndexValues.size())];
  switch (rng.below(7)) {
    case 0:  // the version
      return put_be32(s, 4, value);
    case 1:  // the entry count
      return put_be32(s, 8, rng.percent(50) ? value : static_cast<uint32_t>(rng.below(64)));
    case 2:  // an entry's mode
      return put_be32(s, entry + 24, value);
    case 3:  // an entry's flags (name length, the extended and stage bits)
      if (entry + kIndexEntryFixed <= s.size()) {
        s[entry + 60] = static_cast<char>(value >> 8);
        s[entry + 61] = static_cast<char>(value);
      }
      return;
    case 4: {  // an extension before the trailing checksum
      const std::string ext = index_extension(rng);
      const size_t at = s.size() >= 20 ? s.size() - 20 : s.size();
      if (fits(s, ext.size())) s.insert(at, ext);
      return;
    }
    case 5:  // an entry's bytes again
      if (entry + kIndexEntryFixed <= s.size() && fits(s, kIndexEntryFixed + 8))
        s.insert(entry, s.substr(entry, kIndexEntryFixed + 8));
      return;
    default:  // cut anywhere, the checksum or the middle of an entry
      if (!s.empty()) s.resize(rng.below(s.size()));
      return;
  }
}

// ---- one edit -----------------------------------------------------------------------

void hostile_edit(std::string& s, Grammar g, size_t min_size, Rng& rng) {
  const size_t room = kMaxInput > s.size() ? kMaxInput - s.size() : 0;
  if (room < 16) return;
  const size_t floor = std::min(min_size, room);
  // Leaves room for the line around the hostile part.
  const size_t size = std::min(room - 16, std::max(floor, rng.log_uniform(room)));
  switch (rng.below(3)) {
    case 0: {  // one path of many components
      const std::string path = long_path(size, rng);
      if (g == Grammar::Bpf) break;
      if (g == Grammar::GitIndex) {  // one entry's name, without its NUL
        if (fits(s, path.size()))
          s.insert(std::min(s.size(), kIndexHeader + kIndexEntryFixed), path);
        break;
      }
      if (g == Grammar::Params)
        insert_at_line(s, std::string(pick(kParamNames, rng)) + "=" + path, rng);
      else if (g == Grammar::Argv)
        insert_at_line(s, std::string(rng.percent(50) ? "--tmpfs" : "--ro-bind\n/") + "\n" + path, rng);
      else if (g == Grammar::Yaml && rng.percent(50))
        insert_at_line(s, "  deny: [\"" + path + "\"]", rng);
      else
        replace_word(s, "\"" + path + "\"", rng);
      break;
    }
    case 1: {  // deep nesting
      if (g == Grammar::Bpf || g == Grammar::Argv || g == Grammar::Params || g == Grammar::GitIndex)
        break;
      const size_t depth = std::max<size_t>(1, size / 16);
      if (g == Grammar::Yaml && rng.percent(30)) {
        std::string block = yaml_block_nesting(std::min<size_t>(depth, 700));
        if (fits(s, block.size())) s += block;
      } else {
        std::string nested = nesting(g, depth, rng);
        if (g == Grammar::Yaml) nested = "  deny: " + nested;
        if (g == Grammar::Sexpr) nested = "(allow file-write* " + nested + ")";
        insert_at_line(s, nested, rng);
      }
      break;
    }
    default: {  // one token repeated
      std::string piece;
      if (g == Grammar::Bpf) {
        piece = s.size() >= kInsn && rng.percent(70) ? s.substr(rng.below(s.size() / kInsn) * kInsn, kInsn)
                                                   : random_insn(rng);
      } else if (g == Grammar::GitIndex) {  // an entry, many times
        piece = s.substr(std::min(s.size(), kIndexHeader), kIndexEntryFixed + 10);
      } else if (g == Grammar::Argv) {
        // Mostly an option the artifact already holds (`--tmpfs /t` 60 000 times), so
        // that the repeats reach the mount table.
        const auto group = rng.percent(60) ? argv_group(s, rng) : std::nullopt;
        piece = group ? s.substr(group->first, group->second - group->first) : argv_option(rng);
        if (piece.empty() || piece.back() != '\n') piece += '\n';
      } else if (!s.empty()) {
        auto [b, e] = line_around(s, rng.below(s.size()));
        piece = s.substr(b, e - b);
        if (piece.empty() || piece.back() != '\n') piece += '\n';
        if (g == Grammar::Json) piece = rng.percent(50) ? std::string(pick(kJsonWords, rng)) + "," : piece;
      }
      repeat_piece(s, piece, size, rng);
      break;
    }
  }
}

void one_edit(std::string& s, Grammar g, const std::vector<std::string>& donors, Rng& rng) {
  if (rng.percent(4)) return hostile_edit(s, g, 0, rng);
  const bool text = g != Grammar::Bpf && g != Grammar::GitIndex;
  switch (rng.below(text ? 11 : 8)) {
    case 0:
      return flip_bit(s, rng);
    case 1:
      return set_byte(s, rng);
    case 2:
      return insert_bytes(s, rng);
    case 3:
      return delete_range(s, rng);
    case 4:
      return rng.percent(50) ? duplicate_range(s, rng) : splice(s, donors, rng);
    case 8:
      return duplicate_line(s, rng);
    case 9:
      return delete_line(s, rng);
    case 10:
      return swap_lines(s, rng);
    default:
      break;
  }
  switch (g) {
    case Grammar::Yaml:
      return yaml_edit(s, rng);
    case Grammar::Argv:
      return argv_edit(s, rng);
    case Grammar::Bpf:
      return bpf_edit(s, rng);
    case Grammar::Sexpr:
      return sexpr_edit(s, rng);
    case Grammar::Params:
      return params_edit(s, rng);
    case Grammar::Json:
      return json_edit(s, rng);
    case Grammar::GitIndex:
      return git_index_edit(s, rng);
  }
}

}  // namespace

std::string mutate(std::string input, Grammar grammar, const std::vector<std::string>& donors,
                   Rng& rng) {
  // Mostly one or two edits, so that most inputs stay close enough to valid to reach
  // past the parser; sometimes many.
  const size_t edits = rng.percent(70) ? 1 + rng.below(2) : 1 + rng.below(12);
  for (size_t i = 0; i < edits; ++i) one_edit(input, grammar, donors, rng);
  if (input.size() > kMaxInput) input.resize(kMaxInput);
  return input;
}

std::string mutate_hostile(std::string input, Grammar grammar, size_t min_size, Rng& rng) {
  hostile_edit(input, grammar, min_size, rng);
  if (input.size() > kMaxInput) input.resize(kMaxInput);
  return input;
}

}  // namespace zpolicy::fuzz
