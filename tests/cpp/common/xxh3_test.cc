// Golden vectors from xxHash's own sanity test: buffer byte i is the top byte of a u64 that
// starts at PRIME32 and is multiplied by PRIME64 after each byte.
#include "luminamoon/data/common/xxh3.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace luminamoon::data {
namespace {

std::vector<std::uint8_t> sanity_buffer(std::size_t size) {
  constexpr std::uint64_t kPrime32 = 2654435761ULL;
  constexpr std::uint64_t kPrime64 = 11400714785074694797ULL;
  std::vector<std::uint8_t> buffer(size);
  std::uint64_t gen = kPrime32;
  for (auto& byte : buffer) {
    byte = static_cast<std::uint8_t>(gen >> 56);
    gen *= kPrime64;
  }
  return buffer;
}

TEST(Xxh3, SanityVectors) {
  const auto buffer = sanity_buffer(2048);
  EXPECT_EQ(xxh3_64(buffer.data(), 0), 0x2D06800538D394C2ULL);
  EXPECT_EQ(xxh3_64(buffer.data(), 1), 0xC44BDFF4074EECDBULL);
  EXPECT_EQ(xxh3_64(buffer.data(), 6), 0x27B56A84CD2D7325ULL);
  EXPECT_EQ(xxh3_64(buffer.data(), 12, 11400714785074694797ULL), 0xE7303E1B2336DE0EULL);
  EXPECT_EQ(xxh3_64(buffer.data(), 2048), 0xDD59E2C3A5F038E0ULL);
}

TEST(Xxh3, StringViewOverloadHashesTheBytes) {
  EXPECT_EQ(xxh3_64(std::string_view("")), 0x2D06800538D394C2ULL);
  const std::string_view text = "h\xc3\xa9llo";
  EXPECT_EQ(xxh3_64(text), xxh3_64(text.data(), text.size()));
}

}  // namespace
}  // namespace luminamoon::data
