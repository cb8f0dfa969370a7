#include "tools/loaders/sha256.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace capsim {

namespace {
constexpr std::uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline std::uint32_t rotr(std::uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

#if defined(__x86_64__)
// The x86 SHA extensions (Intel SHA Extensions, 2013): SHA256RNDS2 does two rounds on the state
// held as two registers, {A, B, E, F} and {C, D, G, H} (highest lane first), with the message
// words plus round constants in the low two lanes; SHA256MSG1 and SHA256MSG2 compute the message
// schedule four words at a time.
__attribute__((target("sha,sse4.1,ssse3"))) void blocks_sha_ni(std::uint32_t h[8],
                                                               const unsigned char* p,
                                                               std::size_t n) {
  // Big-endian words: reverse the bytes of each 32-bit lane.
  const __m128i swap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h));      // lanes a b c d
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 4));  // lanes e f g h
  dcba = _mm_shuffle_epi32(dcba, 0xB1);                                     // b a d c
  hgfe = _mm_shuffle_epi32(hgfe, 0x1B);                                     // h g f e
  __m128i abef = _mm_alignr_epi8(dcba, hgfe, 8);                            // f e b a
  __m128i cdgh = _mm_blend_epi16(hgfe, dcba, 0xF0);                         // h g d c
  for (; n > 0; --n, p += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    __m128i w[4];
    for (int i = 0; i < 4; ++i) {
      w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), swap);
    }
    for (int r = 0; r < 16; ++r) {  // four rounds a step; w[r % 4] holds words 4r .. 4r+3
      __m128i& cur = w[r % 4];
      if (r >= 4) {
        // Words t = 4r .. 4r+3 from W[t-16..] (the slot's words before), W[t-12..], W[t-7..t-4]
        // and W[t-4..t-1].
        const __m128i& prev = w[(r + 3) % 4];             // words 4r-4 .. 4r-1
        const __m128i& mid = w[(r + 2) % 4];              // words 4r-8 .. 4r-5
        cur = _mm_sha256msg1_epu32(cur, w[(r + 1) % 4]);  // with words 4r-12 .. 4r-9
        cur = _mm_add_epi32(cur, _mm_alignr_epi8(prev, mid, 4));
        cur = _mm_sha256msg2_epu32(cur, prev);
      }
      __m128i msg =
          _mm_add_epi32(cur, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kK + 4 * r)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
      msg = _mm_shuffle_epi32(msg, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, msg);
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);  // a b e f
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);  // g h c d
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h + 4), _mm_alignr_epi8(dchg, feba, 8));
}
#endif
}  // namespace

bool Sha256::cpu_has_sha() {
#if defined(__x86_64__)
  // Asked once: cpuid is slow, and a trap to the host under a hypervisor.
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
    const bool ssse3 = (c & bit_SSSE3) != 0, sse41 = (c & bit_SSE4_1) != 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
    return ssse3 && sse41 && (b & bit_SHA) != 0;
  }();
  return has;
#else
  return false;
#endif
}

Sha256::Sha256(bool accelerated)
    : accelerated_(accelerated && cpu_has_sha()),
      h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19},
      buf_{} {}

void Sha256::blocks(const unsigned char* p, std::size_t n) {
#if defined(__x86_64__)
  if (accelerated_) {
    blocks_sha_ni(h_, p, n);
    return;
  }
#endif
  for (; n > 0; --n, p += 64)
    block(p);
}

void Sha256::block(const unsigned char* p) {
  std::uint32_t w[64];
  for (int i = 0; i < 16; ++i) {
    w[i] = (std::uint32_t{p[4 * i]} << 24) | (std::uint32_t{p[4 * i + 1]} << 16) |
           (std::uint32_t{p[4 * i + 2]} << 8) | std::uint32_t{p[4 * i + 3]};
  }
  for (int i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6],
                h = h_[7];
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    const std::uint32_t ch = (e & f) ^ (~e & g);
    const std::uint32_t t1 = h + s1 + ch + kK[i] + w[i];
    const std::uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    const std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    const std::uint32_t t2 = s0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
  h_[5] += f;
  h_[6] += g;
  h_[7] += h;
}

void Sha256::update(std::string_view data) {
  total_ += data.size();
  if (data.empty()) return;  // (an empty view's data() may be null, which memcpy must not get)
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t n = data.size();
  if (buf_len_ > 0) {
    const std::size_t take = std::min(n, 64 - buf_len_);
    std::memcpy(buf_ + buf_len_, p, take);
    buf_len_ += take;
    p += take;
    n -= take;
    if (buf_len_ < 64) return;
    blocks(buf_, 1);
    buf_len_ = 0;
  }
  blocks(p, n / 64);
  p += n / 64 * 64;
  n %= 64;
  std::memcpy(buf_, p, n);
  buf_len_ = n;
}

std::string Sha256::hex_digest() {
  const std::uint64_t bits = total_ * 8;
  buf_[buf_len_++] = 0x80;
  if (buf_len_ > 56) {
    while (buf_len_ < 64)
      buf_[buf_len_++] = 0;
    blocks(buf_, 1);
    buf_len_ = 0;
  }
  while (buf_len_ < 56)
    buf_[buf_len_++] = 0;
  for (int i = 7; i >= 0; --i)
    buf_[buf_len_++] = static_cast<unsigned char>(bits >> (8 * i));
  blocks(buf_, 1);
  std::string out;
  for (std::uint32_t v : h_)
    out += fmt::format("{:08x}", v);
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.hex_digest();
}

}  // namespace capsim
