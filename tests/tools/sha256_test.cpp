// SHA-256 against the examples of FIPS 180-4 (and their NIST example files), on both paths: the
// CPU's SHA instructions, when it has them, and the portable rounds.
#include "tools/loaders/sha256.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <string>

namespace capsim {
namespace {

std::string digest(const std::string& data, bool accelerated, std::size_t chunk) {
  Sha256 h(accelerated);
  for (std::size_t at = 0; at < data.size(); at += chunk)
    h.update(std::string_view(data).substr(at, chunk));
  return h.hex_digest();
}

TEST_CASE("SHA-256 gives the FIPS 180-4 example digests, with and without the SHA instructions") {
  const std::string cpu = Sha256::cpu_has_sha()
                              ? "this CPU has the SHA instructions: both paths are checked"
                              : "this CPU lacks the SHA instructions: only the portable path runs";
  MESSAGE(cpu);
  struct Case {
    std::string data;
    const char* want;
  };
  const Case cases[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {std::string(1'000'000, 'a'),
       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.data.size());
    for (const bool accelerated : {false, true}) {
      CAPTURE(accelerated);
      CHECK(digest(c.data, accelerated, c.data.size() + 1) == c.want);
      CHECK(digest(c.data, accelerated, 7) == c.want);  // updates that split blocks
    }
    CHECK(sha256_hex(c.data) == c.want);
  }
  Sha256 empty_view;  // a default string_view (null data) is no input, not a crash
  empty_view.update(std::string_view{});
  CHECK(empty_view.hex_digest() == cases[0].want);
}

TEST_CASE("both SHA-256 paths agree on every length around the block and padding boundaries") {
  std::string data;
  for (std::size_t n = 0; n <= 300; ++n) {
    CAPTURE(n);
    const std::string portable = digest(data, false, 64);
    CHECK(digest(data, true, 64) == portable);
    CHECK(digest(data, true, 13) == portable);
    data.push_back(static_cast<char>((n * 131 + 7) & 0xFF));
  }
}

}  // namespace
}  // namespace capsim
