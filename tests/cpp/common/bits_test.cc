#include "common/internal/bits.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>

namespace luminamoon::data::internal {
namespace {

TEST(Bits, Popcount64IsStdPopcount) {
  static_assert(popcount64(0) == 0 && popcount64(~std::uint64_t{0}) == 64);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) {
    // Sparse, dense and uniform words.
    const std::uint64_t x = rng();
    for (const std::uint64_t word : {x, x & rng() & rng(), x | rng() | rng()}) {
      ASSERT_EQ(popcount64(word), std::popcount(word)) << word;
    }
  }
  for (int bit = 0; bit < 64; ++bit) {
    EXPECT_EQ(popcount64(std::uint64_t{1} << bit), 1);
    EXPECT_EQ(popcount64(~(std::uint64_t{1} << bit)), 63);
  }
}

}  // namespace
}  // namespace luminamoon::data::internal
