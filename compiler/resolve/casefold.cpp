#include "compiler/resolve/casefold.hpp"

#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#if defined(__linux__)
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#endif

namespace zpolicy::compiler {
namespace {

// A name or pattern piece as a case-folding filesystem compares it: ASCII bytes (letters
// lowered), and kAny for each character whose folded form zpolicy cannot spell (it holds
// a character outside ASCII, and maybe some ASCII: "Ä" folds to "a" and a combining mark).
constexpr int kAny = -1;
struct Folded {
  std::vector<int> text;
  bool valid = true;  // UTF-8: a casefolding filesystem compares anything else byte for byte
  bool exact() const { return std::find(text.begin(), text.end(), kAny) == text.end(); }
};

// The characters other than ASCII whose case-folded decomposition is ASCII (derived from
// the Unicode Character Database: NFD then full case folding, in either order).
const char* ascii_fold_of(char32_t c) {
  switch (c) {
    case 0x00DF:
    case 0x1E9E:
      return "ss";
    case 0x017F:
      return "s";
    case 0x037E:
      return ";";
    case 0x1FEF:
      return "`";
    case 0x212A:
      return "k";
    case 0xFB00:
      return "ff";
    case 0xFB01:
      return "fi";
    case 0xFB02:
      return "fl";
    case 0xFB03:
      return "ffi";
    case 0xFB04:
      return "ffl";
    case 0xFB05:
    case 0xFB06:
      return "st";
    default:
      return nullptr;
  }
}

Folded fold(std::string_view s) {
  Folded out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      out.text.push_back(b >= 'A' && b <= 'Z' ? b - 'A' + 'a' : b);
      ++i;
      continue;
    }
    const size_t n = b >= 0xF0 && b < 0xF5 ? 4 : b >= 0xE0 && b < 0xF0 ? 3 : b >= 0xC2 && b < 0xE0 ? 2 : 0;
    if (n == 0 || i + n > s.size()) {
      out.valid = false;
      return out;
    }
    char32_t c = b & (0xFF >> (n + 1));
    for (size_t k = 1; k < n; ++k) {
      const auto t = static_cast<unsigned char>(s[i + k]);
      if ((t & 0xC0) != 0x80) {
        out.valid = false;
        return out;
      }
      c = (c << 6) | (t & 0x3F);
    }
    if (const char* ascii = ascii_fold_of(c))
      for (const char* a = ascii; *a; ++a) out.text.push_back(static_cast<unsigned char>(*a));
    else
      out.text.push_back(kAny);
    i += n;
  }
  return out;
}

// Whether some string both sequences can stand for is the same, kAny standing for any
// string in either: a table over suffixes, filled from the ends (no recursion).
bool may_be_equal(const std::vector<int>& a, const std::vector<int>& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<char> next(m + 1, 0), row(m + 1, 0);
  for (size_t i = n + 1; i-- > 0;) {
    for (size_t j = m + 1; j-- > 0;) {
      bool v = i == n && j == m;
      if (i < n && a[i] == kAny) v = v || next[j] || (j < m && row[j + 1]);
      if (j < m && b[j] == kAny) v = v || row[j + 1] || (i < n && next[j]);
      if (i < n && j < m && a[i] != kAny && a[i] == b[j]) v = v || next[j + 1];
      row[j] = v;
    }
    std::swap(next, row);
  }
  return next[0];
}

}  // namespace

bool folds_case(int fd) {
#if defined(__linux__)
  struct statfs fs {};
  if (fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case MSDOS_SUPER_MAGIC:
    case EXFAT_SUPER_MAGIC:
    case 0x482b:      // hfsplus
    case 0xFF534D42:  // cifs
    case 0xFE534D42:  // smb2
      return true;
    case EXT4_SUPER_MAGIC:
    case F2FS_SUPER_MAGIC:
    case TMPFS_MAGIC: {
      int flags = 0;
      return ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_CASEFOLD_FL);
    }
    default:
      return false;
  }
#elif defined(_PC_CASE_SENSITIVE)
  return fpathconf(fd, _PC_CASE_SENSITIVE) == 0;
#else
  (void)fd;
  return false;
#endif
}

bool matches_folded(const ir::PatternComponent& component, std::string_view name) {
  const Folded n = fold(name);
  if (!n.valid) return component.matches(name);
  // The pattern as one sequence: its pieces, a `*` between two of them standing for any
  // string (a Literal is one piece).
  std::vector<int> pattern;
  for (size_t i = 0; i < component.pieces.size(); ++i) {
    if (i) pattern.push_back(kAny);
    const Folded p = fold(component.pieces[i]);
    if (!p.valid) return component.matches(name);
    pattern.insert(pattern.end(), p.text.begin(), p.text.end());
  }
  // A literal all of whose characters fold to ASCII never equals a name holding any other
  // character (its folded form holds a character outside ASCII).
  if (component.kind == ir::PatternComponent::Kind::Literal &&
      std::find(pattern.begin(), pattern.end(), kAny) == pattern.end() && !n.exact())
    return false;
  return may_be_equal(n.text, pattern);
}

}  // namespace zpolicy::compiler
