#include "compiler/analyzer/sbpl/sbpl_emitted_reader.hpp"

#include <bit>
#include <cstring>
#include <optional>
#include <vector>

#include "compiler/analyzer/sbpl/sbpl_subset.hpp"

namespace zpolicy::compiler {
namespace {

using sbpl_subset::kChars;
using sbpl_subset::operation_bit;

// Reads a profile straight from its text into an SbplProfile, for texts in the subset
// only: at anything else (an error, but also a form it does not expect) it gives up, and
// parse_sbpl reads the text again with parse_sbpl_general, whose positions and messages
// are the ones reported. Building every form as a Node first, then walking them, was most
// of the cost of checking a profile that is fine, as the emitted ones are.
class FastReader {
 public:
  explicit FastReader(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  bool profile(SbplProfile& out) {
    if (!open() || !keyword("version") || token() != "1" || !close()) return false;
    if (!open()) return false;
    const std::string_view d = token();
    if ((d != "deny" && d != "allow") || !keyword("default") || !close()) return false;
    out.default_allow = d == "allow";
    // zpolicy writes a filter per 30 characters or so: this spares growing the array.
    out.filters.reserve(static_cast<size_t>(end_ - p_) / 24);
    for (;;) {
      skip_space();
      if (p_ == end_) return true;
      if (!rule(out)) return false;
    }
  }

 private:
  bool rule(SbplProfile& out) {
    SbplRule r;
    r.line = line_;
    if (*p_ != '(') return false;
    ++p_;
    const std::string_view head = token();
    if (head != "allow" && head != "deny") return false;
    r.allow = head == "allow";
    for (;;) {
      skip_space();
      if (p_ == end_ || !kChars.symbol[static_cast<unsigned char>(*p_)]) break;
      const std::string_view op = token();
      const uint64_t bit = operation_bit(op);
      if (!bit) return false;
      r.operations.emplace_back(op);
      r.operation_bits |= bit;
    }
    if (r.operations.empty() || !filter_list(out.filters, r.first_filter, r.end_filter))
      return false;
    out.rules.push_back(std::move(r));
    return true;
  }

  // The filters up to the list's ')', appended to `filters` as one range once all are
  // read: those under them, read first, take ranges before it. Until then they wait on
  // `open_`, above those of the lists they are in.
  bool filter_list(std::vector<SbplFilter>& filters, uint32_t& first, uint32_t& end) {
    const size_t base = open_.size();
    for (;;) {
      skip_space();
      if (p_ == end_) return false;
      if (*p_ == ')') {
        ++p_;
        break;
      }
      if (*p_ != '(') return false;
      ++p_;
      open_.emplace_back();
      if (!filter(open_.size() - 1, filters)) return false;
    }
    first = static_cast<uint32_t>(filters.size());
    filters.insert(filters.end(), open_.begin() + static_cast<ptrdiff_t>(base), open_.end());
    end = static_cast<uint32_t>(filters.size());
    open_.resize(base);
    return true;
  }

  // The filter open_[at] after its '(', up to and with its ')'.
  bool filter(size_t at, std::vector<SbplFilter>& filters) {
    using K = SbplFilter::Kind;
    const auto kind = filter_head();
    if (!kind) return false;
    // Not used once the filters under it are read: `open_` may move.
    SbplFilter& f = open_[at];
    f.kind = *kind;
    switch (f.kind) {
      case K::Literal:
      case K::Subpath:
        if (param_path(f)) return true;
        skip_space();
        if (p_ != end_ && *p_ == '(') {
          ++p_;
          if (!keyword("param") || !string(f.value) || !close()) return false;
          f.is_param = true;
        } else if (!string(f.value) || !f.value.starts_with('/')) {
          return false;
        }
        return close();
      case K::RequireAll:
      case K::RequireAny:
      case K::RequireNot: {
        uint32_t first = 0, end = 0;
        if (!filter_list(filters, first, end)) return false;
        open_[at].first_child = first;
        open_[at].end_child = end;
        return end - first == 1 || (end > first && *kind != K::RequireNot);
      }
      case K::TargetSameSandbox:
        return keyword("same-sandbox") && close();
      case K::LocalIp:
      case K::RemoteIp: {
        if (!keyword("ip") || !string(f.value) || !close()) return false;
        const auto colon = f.value.rfind(':');
        const std::string_view host = f.value.substr(0, colon);
        return colon != std::string_view::npos && (host == "localhost" || host == "*");
      }
      case K::SysctlName:
      case K::SysctlNamePrefix:
      case K::GlobalName:
        return string(f.value) && close();
    }
    return false;
  }

  // A path filter's rest written as zpolicy writes nearly all of them,
  // ` (param "NAME"))`, told by comparing the bytes rather than token by token; if it is
  // written otherwise, nothing is read.
  bool param_path(SbplFilter& f) {
    constexpr std::string_view open = " (param \"", close = "\"))";
    if (static_cast<size_t>(end_ - p_) < open.size() ||
        std::memcmp(p_, open.data(), open.size()) != 0)
      return false;
    const char* const start = p_ + open.size();
    const char* const resume = p_;
    p_ = start;
    skip_string_body();
    if (static_cast<size_t>(end_ - p_) < close.size() ||
        std::memcmp(p_, close.data(), close.size()) != 0) {
      p_ = resume;
      return false;
    }
    f.value = {start, static_cast<size_t>(p_ - start)};
    f.is_param = true;
    p_ += close.size();
    return true;
  }

  // The symbol or integer next, empty if something else is.
  std::string_view token() {
    skip_space();
    const char* start = p_;
    while (p_ != end_ && kChars.symbol[static_cast<unsigned char>(*p_)]) ++p_;
    return {start, static_cast<size_t>(p_ - start)};
  }
  // The symbol `word` next.
  template <size_t N>
  bool keyword(const char (&word)[N]) {
    skip_space();
    return at(word);
  }
  // The symbol `word` at the position, compared in place rather than scanned first, the
  // length known to the compiler so that the comparison is a load or two.
  template <size_t N>
  bool at(const char (&word)[N]) {
    constexpr size_t n = N - 1;
    const auto left = static_cast<size_t>(end_ - p_);
    if (left < n || std::memcmp(p_, word, n) != 0) return false;
    if (left > n && kChars.symbol[static_cast<unsigned char>(p_[n])]) return false;
    p_ += n;
    return true;
  }
  // The head of a filter: its first character leaves a keyword or a few to compare it
  // with. Scanning the head first, then looking it up, cost twice as much.
  std::optional<SbplFilter::Kind> filter_head() {
    using K = SbplFilter::Kind;
    skip_space();
    if (p_ == end_) return std::nullopt;
    switch (*p_) {
      case 'l':
        if (at("literal")) return K::Literal;
        if (at("local")) return K::LocalIp;
        break;
      case 's':
        if (at("subpath")) return K::Subpath;
        if (at("sysctl-name")) return K::SysctlName;
        if (at("sysctl-name-prefix")) return K::SysctlNamePrefix;
        break;
      case 'r':
        if (at("require-not")) return K::RequireNot;
        if (at("require-all")) return K::RequireAll;
        if (at("require-any")) return K::RequireAny;
        if (at("remote")) return K::RemoteIp;
        break;
      case 't':
        if (at("target")) return K::TargetSameSandbox;
        break;
      case 'g':
        if (at("global-name")) return K::GlobalName;
        break;
      default:
        break;
    }
    return std::nullopt;
  }
  bool string(std::string_view& value) {
    skip_space();
    if (p_ == end_ || *p_ != '"') return false;
    const char* start = ++p_;
    skip_string_body();
    if (p_ == end_ || *p_ != '"') return false;
    value = {start, static_cast<size_t>(p_ - start)};
    ++p_;
    return true;
  }
  // Up to the first character in kChars.string_stop, eight at a time where the host's byte
  // order lets the first one found in a word be told by its lowest bit: paths are most of
  // the text.
  void skip_string_body() {
    if constexpr (std::endian::native == std::endian::little) {
      constexpr uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
      // The high bit of each byte of `w` below `c` (at most 0x80), and perhaps of bytes
      // after one: the lowest is exact.
      auto below = [](uint64_t w, unsigned char c) { return (w - kOnes * c) & ~w & kHighs; };
      while (end_ - p_ >= static_cast<ptrdiff_t>(sizeof(uint64_t))) {
        uint64_t w;
        std::memcpy(&w, p_, sizeof w);
        // The stops but '\\' are below '#', with a few characters a path may hold.
        const uint64_t maybe = below(w, '#') | below(w ^ (kOnes * '\\'), 1);
        if (!maybe) {
          p_ += sizeof w;
          continue;
        }
        p_ += std::countr_zero(maybe) / 8;
        if (kChars.string_stop[static_cast<unsigned char>(*p_)]) return;
        ++p_;
      }
    }
    while (p_ != end_ && !kChars.string_stop[static_cast<unsigned char>(*p_)]) ++p_;
  }
  bool open() { return punct('('); }
  bool close() { return punct(')'); }
  bool punct(char c) {
    skip_space();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  // A token next, the common case, is told inline by one look-up.
  void skip_space() {
    if (p_ != end_ && kChars.space[static_cast<unsigned char>(*p_)]) skip_some_space();
  }
  void skip_some_space() {
    while (p_ != end_ && kChars.space[static_cast<unsigned char>(*p_)]) {
      if (*p_ == ';') {
        const void* nl = std::memchr(p_, '\n', static_cast<size_t>(end_ - p_));
        p_ = nl ? static_cast<const char*>(nl) : end_;
        continue;
      }
      if (*p_ == '\n') ++line_;
      ++p_;
    }
  }

  const char* p_;
  const char* end_;
  int line_ = 1;
  // The filters read of the lists not closed yet, innermost last.
  std::vector<SbplFilter> open_;
};

}  // namespace

bool read_emitted_profile(std::string_view text, SbplProfile& out) {
  return FastReader(text).profile(out);
}

}  // namespace zpolicy::compiler
