#pragma once

// One policy file per class of invalid input (issue 2, "Done when"), with the exact
// diagnostics zpolicy must print for it when the file is named "bad.yaml". Shared by
// every command that takes a policy: each must refuse all of them with exit 2.
#include <string>
#include <vector>

namespace zpolicy::test {

struct BadPolicy {
  const char* name;
  std::string content;
  std::string expected_stderr;  // with the policy named "bad.yaml"
};

inline std::string billion_laughs() {
  std::string t =
      "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    t += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) t += std::string(i ? "," : "") + "*" + static_cast<char>(c - 1);
    t += "]\n";
  }
  return t;
}

inline std::vector<BadPolicy> bad_policies() {
  const std::string head = "zpolicy: 1\nmode: workspace-write\n";
  std::string deep_block;
  for (int i = 0; i < 1400; ++i) deep_block += std::string(i, ' ') + "a:\n";
  std::string garbage(
      "\x7f"
      "ELF\x02\x01\x01\x00",
      8);
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 2654435761u) >> 13);
  return {
      {"unknown key", head + "netwrok: none\n",
       "bad.yaml:3:1: error: unknown key 'netwrok'; did you mean 'network'?\n"},
      {"wrong type", head + "filesystem:\n  read: /\n",
       "bad.yaml:4:9: error: 'read' must be a list, not a scalar\n"},
      {"duplicate key", head + "mode: read-only\n",
       "bad.yaml:3:1: error: duplicate key 'mode' (first set at line 2)\n"},
      {"bad enum", head + "network: nnoe\n",
       "bad.yaml:3:10: error: invalid network 'nnoe' (expected one of: none, loopback, full); did "
       "you mean 'none'?\n"},
      {"missing version", "mode: read-only\n",
       "bad.yaml:1:1: error: missing required key 'zpolicy' (the schema version; write 'zpolicy: "
       "1')\n"},
      {"unsupported version", "zpolicy: 2\nmode: read-only\n",
       "bad.yaml:1:10: error: unsupported schema version 2 (this zpolicy reads version 1)\n"},
      {"unknown variable", head + "filesystem:\n  write: [\"${WORKDIR}\"]\n",
       "bad.yaml:4:11: error: in 'write': unknown variable '${WORKDIR}' (known: ${WORKSPACE}, "
       "${HOME}, ${TMPDIR}, ~)\n"},
      {"dot-dot", head + "filesystem:\n  protect: [../.git]\n",
       "bad.yaml:4:13: error: in 'protect': '..' is not allowed in a path\n"},
      {"relative path", head + "filesystem:\n  deny: [.ssh]\n",
       "bad.yaml:4:10: error: in 'deny': relative path '.ssh'; an absolute path or a variable is "
       "required\n"},
      {"NUL in a path", head + "filesystem:\n  write: [\"/a\\0b\"]\n",
       "bad.yaml:4:11: error: in 'write': path contains a NUL byte\n"},
      {"newline in a path", head + "filesystem:\n  deny: [\"/a\\nb\"]\n",
       "bad.yaml:4:10: error: in 'deny': path contains a newline\n"},
      {"unknown syscall", head + "syscalls:\n  deny: [ptrace, frobnicate]\n",
       "bad.yaml:4:18: error: unknown syscall 'frobnicate'\n"},
      {"malformed duration", head + "process:\n  timeout: 12x\n",
       "bad.yaml:4:12: error: malformed duration '12x' (expected e.g. 500ms, 120s, 10m, 2h)\n"},
      {"deny-list and allow-list",
       head + "syscalls:\n  deny: [ptrace]\n  default: errno\n  allow: [read]\n",
       "bad.yaml:4:3: error: 'syscalls' is either a deny-list (deny, action) or an allow-list "
       "(default, allow), not both\n"},
      {"write under read-only",
       "zpolicy: 1\nmode: read-only\nfilesystem:\n  write: [\"${WORKSPACE}\"]\n",
       "bad.yaml:4:10: error: writable roots need mode workspace-write; this policy is "
       "read-only\n"},
      {"run-unconfined with read-only",
       "zpolicy: 1\nmode: read-only\nunavailable: run-unconfined\n",
       "bad.yaml:3:14: error: 'unavailable: run-unconfined' is only allowed with mode "
       "workspace-write\n"},
      {"several errors", head + "netwrok: none\nsyscalls:\n  deny: [frobnicate]\n",
       "bad.yaml:3:1: error: unknown key 'netwrok'; did you mean 'network'?\n"
       "bad.yaml:5:10: error: unknown syscall 'frobnicate'\n"},
      {"YAML syntax", "zpolicy: 1\nmode: [\n",
       "bad.yaml:3:1: error: YAML syntax error: end of sequence flow not found\n"},
      {"not a mapping", "- zpolicy: 1\n",
       "bad.yaml:1:1: error: the policy must be a mapping, not a list\n"},
      {"danger-full-access has nothing to compile", "zpolicy: 1\nmode: danger-full-access\n",
       "bad.yaml:2:7: error: nothing to compile: danger-full-access runs without a sandbox (use "
       "--mode to compile a narrower mode)\n"},
      {"alias bomb", billion_laughs(),
       "bad.yaml:1:4: error: YAML anchors are not allowed in a policy\n"},
      {"10000-deep flow nesting", std::string(10000, '[') + std::string(10000, ']'),
       "bad.yaml:1:33: error: nesting deeper than 32 levels\n"},
      {"deep block mapping", deep_block, "bad.yaml:33:33: error: nesting deeper than 32 levels\n"},
      {"2 MiB file", head + "#" + std::string(2 << 20, 'x') + "\n",
       "bad.yaml: error: policy file is larger than the limit of 1048576 bytes\n"},
      {"binary garbage", garbage,
       "bad.yaml:1:1: error: control character in policy file (binary input?)\n"},
      {"invalid UTF-8", "zpolicy: 1\nmode: \"\xed\xa0\x80\"\n",
       "bad.yaml:2:8: error: policy file is not valid UTF-8\n"},
      {"NUL byte", std::string("zpolicy: 1\nmode: read-only\0\n", 28),
       "bad.yaml:2:16: error: NUL byte in policy file\n"},
      {"YAML tag", "zpolicy: !!python/object/apply:os.system [\"id\"]\nmode: read-only\n",
       "bad.yaml:1:10: error: YAML tags are not allowed "
       "('tag:yaml.org,2002:python/object/apply:os.system')\n"},
      {"empty file", "", "bad.yaml: error: policy file is empty\n"},
      {"two documents", "zpolicy: 1\nmode: read-only\n---\nzpolicy: 1\nmode: read-only\n",
       "bad.yaml: error: policy file holds more than one YAML document\n"},
  };
}

}  // namespace zpolicy::test
