// SHA-256 (FIPS 180-4), for the `run.scenario_sha256` column: which exact scenario produced a
// report. Our own small implementation; no cryptographic use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace capsim {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  std::string hex_digest();  // finishes the hash; call once

 private:
  void block(const unsigned char* p);
  std::uint32_t h_[8];
  unsigned char buf_[64];
  std::size_t buf_len_ = 0;
  std::uint64_t total_ = 0;
};

std::string sha256_hex(std::string_view data);

}  // namespace capsim
