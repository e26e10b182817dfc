#include "compiler/resolve/casefold.hpp"

#include <unistd.h>

#include <string>

#if defined(__linux__)
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#endif

namespace zpolicy::compiler {
namespace {

struct Folded {
  std::string text;
  bool valid = true;  // UTF-8: a casefolding filesystem compares anything else byte for byte
  bool exact = true;  // every character folded to ASCII
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
      out.text += static_cast<char>(b >= 'A' && b <= 'Z' ? b - 'A' + 'a' : b);
      ++i;
      continue;
    }
    const size_t n = b >= 0xF0 && b < 0xF5 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b < 0xE0 ? 2 : 0;
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
    if (const char* ascii = ascii_fold_of(c)) {
      out.text += ascii;
    } else {
      out.text.append(s.substr(i, n));
      out.exact = false;
    }
    i += n;
  }
  return out;
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
  ir::PatternComponent folded = component;
  bool exact_pattern = true;
  for (auto& piece : folded.pieces) {
    const Folded p = fold(piece);
    exact_pattern &= p.valid && p.exact;
    piece = p.text;
  }
  if (n.exact && exact_pattern) return folded.matches(n.text);
  // A name holding a character whose folded form is not ASCII equals no ASCII literal.
  if (component.kind == ir::PatternComponent::Kind::Literal && exact_pattern) return false;
  return true;
}

}  // namespace zpolicy::compiler
