// SHA-256 (FIPS 180-4), for the `run.scenario_sha256` column: which exact scenario produced a
// report. Our own small implementation; no cryptographic use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace capsim {

class Sha256 {
 public:
  // `accelerated`: use the CPU's SHA instructions (x86 SHA extensions) when it has them; the
  // digest is the same either way (tests compare the two).
  explicit Sha256(bool accelerated = true);
  void update(std::string_view data);
  std::string hex_digest();  // finishes the hash; call once

  // Whether this CPU has the SHA instructions the accelerated path uses.
  static bool cpu_has_sha();

 private:
  void blocks(const unsigned char* p, std::size_t n);  // n whole 64-byte blocks
  void block(const unsigned char* p);
  bool accelerated_;
  std::uint32_t h_[8];
  unsigned char buf_[64];
  std::size_t buf_len_ = 0;
  std::uint64_t total_ = 0;
};

std::string sha256_hex(std::string_view data);

}  // namespace capsim
