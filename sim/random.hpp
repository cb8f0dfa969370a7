// Seeded random streams. Every purpose (arrivals, durations, failures, tie-breaks, ...) draws from
// its own stream derived from the run's master seed and the stream's name, so adding draws for
// one purpose never shifts the numbers another purpose sees. The generator is xoshiro256**
// seeded through SplitMix64; the distribution transforms are our own (the standard library's
// distributions are implementation-defined and would make results differ across toolchains).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace capsim {

class RandomStream {
 public:
  RandomStream(std::uint64_t master_seed, std::string_view purpose);
  explicit RandomStream(std::uint64_t raw_seed);

  std::uint64_t next_u64();
  // Uniform on [0, 1) with 53 random bits.
  double uniform();
  // Uniform on (0, 1]; safe to take a logarithm of.
  double uniform_open0() { return 1.0 - uniform(); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer on [0, n), unbiased (Lemire's multiply-and-reject). n > 0.
  std::uint64_t below(std::uint64_t n);
  bool bernoulli(double p) { return uniform() < p; }
  double exponential(double rate);
  // Standard normal by the Marsaglia polar method (one cached spare value).
  double normal();
  double normal(double mean, double stddev) { return mean + stddev * normal(); }
  double lognormal(double mu, double sigma);
  // Gamma(shape k, scale 1) by Marsaglia-Tsang; k > 0.
  double gamma(double shape);
  double beta(double a, double b);
  // Index drawn with probability weights[i] / sum(weights). Weights are >= 0 with a positive sum.
  std::size_t discrete(std::span<const double> weights);

  template <typename It>
  void shuffle(It first, It last) {  // Fisher-Yates, deterministic given the stream
    auto n = static_cast<std::uint64_t>(last - first);
    for (std::uint64_t i = n; i > 1; --i) {
      const std::uint64_t j = below(i);
      std::swap(first[static_cast<std::ptrdiff_t>(i - 1)], first[static_cast<std::ptrdiff_t>(j)]);
    }
  }

 private:
  std::array<std::uint64_t, 4> s_{};
  double spare_normal_ = 0.0;
  bool has_spare_ = false;
};

// 64-bit FNV-1a of a string; used to derive stream seeds from purpose names.
std::uint64_t fnv1a64(std::string_view s);
// A 64-bit hash of a text, eight bytes at a time: for telling messages apart in memory (never
// written out, never seeding anything), where fnv1a64's byte-at-a-time loop showed up in
// profiles of failed scheduling attempts.
std::uint64_t text_hash(std::string_view s);
std::uint64_t splitmix64(std::uint64_t& state);

}  // namespace capsim
