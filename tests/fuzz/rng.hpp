#pragma once

#include <cstddef>
#include <cstdint>

namespace zpolicy::fuzz {

// SplitMix64: a fixed, tiny generator whose stream is the same with every compiler and
// standard library (std::uniform_int_distribution is not), so that a seed and an
// iteration name one input everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }

  // Uniform enough in [0, n) for n far below 2^64; 0 when n is 0.
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }

  bool percent(unsigned p) { return below(100) < p; }

  // Sizes spread over orders of magnitude: 1..max, each power of two about as likely.
  size_t log_uniform(size_t max) {
    size_t bits = 0;
    while ((size_t{1} << (bits + 1)) <= max && bits < 40) ++bits;
    const size_t top = size_t{1} << below(bits + 1);
    const size_t v = top + below(top);
    return v > max ? max : v;
  }

 private:
  uint64_t state_;
};

// The generator for one input: the run's seed, the input kind and the iteration mixed,
// so that any input is regenerated without replaying the ones before it.
inline Rng rng_for(uint64_t seed, uint64_t kind, uint64_t iteration) {
  Rng mix(seed ^ (kind << 56));
  const uint64_t a = mix.next();
  Rng second(a ^ iteration);
  second.next();
  return second;
}

}  // namespace zpolicy::fuzz
