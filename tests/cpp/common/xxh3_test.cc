// Golden vectors from xxHash's own sanity test: buffer byte i is the top byte of a u64 that
// starts at PRIME32 and is multiplied by PRIME64 after each byte.
#include "luminamoon/data/common/xxh3.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "common/internal/xxh3_kernels.h"

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

// Every XXH3 build this CPU can run (internal/xxh3_kernels.h) gives the scalar build's values, at
// every length around the short/mid/long boundaries and its stripe and block sizes, with and
// without a seed, at unaligned starts.
class Xxh3KernelIsa : public ::testing::TestWithParam<Isa> {};

TEST_P(Xxh3KernelIsa, MatchesScalar) {
  const internal::Xxh3Kernel& kernel = internal::xxh3_kernel_for(GetParam());
  std::mt19937_64 rng(5);
  std::vector<std::uint8_t> buffer(70000);
  for (auto& byte : buffer) byte = static_cast<std::uint8_t>(rng());
  std::vector<std::size_t> sizes;
  for (std::size_t n = 0; n <= 1100; ++n) sizes.push_back(n);
  for (const std::size_t n : {2047U, 2048U, 4095U, 4096U, 8191U, 65536U, 69999U})
    sizes.push_back(n);
  for (const std::size_t size : sizes) {
    for (const std::size_t offset : {std::size_t{0}, std::size_t{3}}) {
      if (offset + size > buffer.size()) continue;
      const std::uint8_t* data = buffer.data() + offset;
      for (const std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{0x9E3779B97F4A7C15ULL}}) {
        ASSERT_EQ(kernel.hash(data, size, seed), internal::xxh3_64_scalar(data, size, seed))
            << isa_name(GetParam()) << " size=" << size << " offset=" << offset;
      }
    }
  }
  // The public entry point dispatches long inputs and gives the same values.
  EXPECT_EQ(xxh3_64(buffer.data(), 8192), internal::xxh3_64_scalar(buffer.data(), 8192, 0));
  EXPECT_EQ(xxh3_64(buffer.data(), 241, 7), internal::xxh3_64_scalar(buffer.data(), 241, 7));
}

// The bulk entry point (exact dedup's loop, the AVX-512 build at that level) and xxh3_64 (the AVX2
// build there) give the same values at every length around the long-input boundary.
TEST(Xxh3Kernel, BulkEntryPointMatchesXxh3) {
  std::mt19937_64 rng(9);
  std::vector<std::uint8_t> buffer(20000);
  for (auto& byte : buffer) byte = static_cast<std::uint8_t>(rng());
  for (std::size_t size = 0; size <= 1100; ++size) {
    ASSERT_EQ(internal::xxh3_64_bulk(buffer.data() + 1, size), xxh3_64(buffer.data() + 1, size))
        << "size=" << size;
  }
  for (const std::size_t size : {4096U, 7841U, 19999U}) {
    EXPECT_EQ(internal::xxh3_64_bulk(buffer.data(), size),
              internal::xxh3_64_scalar(buffer.data(), size, 0));
  }
}

TEST(Xxh3Kernel, ActiveKernelIsSupported) {
  EXPECT_TRUE(isa_supported(internal::active_xxh3_kernel().isa));
}

INSTANTIATE_TEST_SUITE_P(SupportedIsas, Xxh3KernelIsa, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& param) {
                           return std::string(isa_name(param.param));
                         });

}  // namespace
}  // namespace luminamoon::data
